// The CUDA executor as a `memopt bench` backend (exec/bench_backend.h): warm-up and timed runs of
// one model in one caching pool (so later iterations reuse its blocks, as a training loop would),
// timed with CUDA events.
#pragma once

#include <memory>

#include "exec/bench_backend.h"

namespace memopt::cuda {

/// Probes GPU 0 (kNoDevice with the runtime's reason when there is none usable) and returns the
/// backend that runs on it; `allow_tf32`: float32 MatMul/Gemm may use TF32 tensor cores.
Expected<std::unique_ptr<BenchBackend>> CudaBenchBackend(bool allow_tf32);

}  // namespace memopt::cuda
