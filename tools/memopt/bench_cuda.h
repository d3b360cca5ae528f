// The GPU side of `memopt bench --device cuda`: warmup + timed runs of one model on the CUDA
// executor in one caching pool (so later iterations reuse its blocks, as a training loop would).
// Only in builds with the CUDA backend (MEMOPT_HAVE_CUDA).
#pragma once

#ifdef MEMOPT_HAVE_CUDA

#include <memory>

#include "bench_backend.h"

namespace memopt::cli {

/// Probes GPU 0 (kNoDevice with the runtime's reason when there is none usable) and returns the
/// backend that runs on it; `allow_tf32`: float32 MatMul/Gemm may use TF32 tensor cores.
Expected<std::unique_ptr<BenchBackend>> MakeCudaBenchBackend(bool allow_tf32);

}  // namespace memopt::cli

#endif  // MEMOPT_HAVE_CUDA
