// The GPU side of `memopt bench --device cuda`: warmup + timed runs of one model on the CUDA
// executor in one caching pool (so later iterations reuse its blocks, as a training loop would).
// Only in builds with the CUDA backend (MEMOPT_HAVE_CUDA).
#pragma once

#ifdef MEMOPT_HAVE_CUDA

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "caching_pool.h"
#include "exec/executor.h"
#include "exec/op_profile.h"
#include "exec/tensor.h"
#include "io/model_loader.h"

namespace memopt::cli {

struct CudaBench {
  std::vector<double> times_ms;  ///< CUDA-event step time of each timed iteration
  MemoryStats memory;            ///< the static rules' live bytes (= scan's estimate for this order)
  cuda::PoolStats pool;          ///< the pool's measured requested/reserved peaks (last iteration)
  uint64_t device_free_before = 0, device_free_after = 0;  ///< cudaMemGetInfo (last iteration)
  std::map<std::string, Tensor> outputs;  ///< of the last iteration
};

/// Checks every op has a CUDA kernel (Unsupported naming ops and nodes), then runs; `on_run`
/// (may be empty) is called with the number of runs done after each one. `profile`, when set,
/// receives the node times of the timed runs.
Expected<CudaBench> BenchOnCuda(const Model& model, const std::map<std::string, Tensor>& feeds, int warmup,
                                int iters, uint64_t seed, bool allow_tf32, const OutputGradients& output_grads,
                                const std::function<void(int)>& on_run = {}, OpProfile* profile = nullptr);

}  // namespace memopt::cli

#endif  // MEMOPT_HAVE_CUDA
