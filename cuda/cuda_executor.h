// The CUDA executor: runs a Model on the GPU in the same execution order as the CPU reference
// executor (exec/executor.h), freeing each value after its last use with the same rules
// (exec/memory_tracker.h), so the pool's measured peak of requested bytes is comparable with the
// static estimate and with `memopt run`. Outputs come back as CPU Tensors.
#pragma once

#include "exec/output_gradients.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cuda_kernel.h"
#include "device_pool.h"
#include "exec/executor.h"
#include "exec/op_profile.h"
#include "exec/tensor.h"
#include "io/model_loader.h"

namespace memopt::cuda {

struct CudaRunOptions {
  /// Execution order (node ids). Empty: the order `scan` uses, as RunOptions::order.
  std::vector<NodeId> order;
  uint64_t seed = 0;
  bool allow_tf32 = false;                       ///< float32 MatMul/Gemm may use TF32
  /// What the YieldOp hands the backward as gradients of the module outputs (as RunOptions).
  OutputGradients output_grads;
  const CudaKernelRegistry* registry = nullptr;  ///< nullptr = CudaKernelRegistry::Builtin()
  /// Pool to run in (kept across bench iterations so its cache is warm); nullptr = a new one.
  std::shared_ptr<DevicePool> pool;
  /// The arena the node outputs take their slots from (exec/arena_plan.h, cuda/device_arena.h):
  /// used when made for this run's order; unset, a run plans its own (PlanRunArena) unless
  /// MEMOPT_ARENA=0 or a size is unknown, and then runs on the caching pool alone. The pool keeps
  /// the arena's device memory across runs of the same plan object.
  std::shared_ptr<const ArenaPlan> arena;
  /// false: no arena unless `arena` is given (the caching pool alone, for comparison).
  bool plan_arena = true;
  /// cuBLAS handle bound to `pool`'s stream, kept across iterations so that its workspace is not
  /// set up inside the timed loop again each run; nullptr = a new one per run.
  CublasPtr cublas;
  /// When set, the GPU time between consecutive nodes (CUDA events; a node's share holds the launch
  /// gap before it, so the shares add up to the step) is added to it, and the run counted.
  OpProfile* profile = nullptr;
};

struct CudaRunResult {
  std::map<std::string, Tensor> outputs;  ///< graph outputs by name, downloaded
  MemoryStats memory;     ///< live tensor bytes with the CPU executor's rules (the estimate's)
  PoolStats pool;         ///< measured by the pool during this run (peaks reset at its start), arena included
  ArenaUse arena;         ///< what the arena held (arena_bytes 0: the run had none)
  uint64_t device_free_before = 0;  ///< cudaMemGetInfo free bytes before the run ...
  uint64_t device_free_after = 0;   ///< ... and after it, values still held (cross-check)
  double step_ms = 0;     ///< CUDA events around the node loop (inputs already on the device)
};

/// Runs the model on the current device (ProbeDevice selects it). `feeds` bind graph inputs by
/// name, as in memopt::Execute; errors name the node or input.
Expected<CudaRunResult> ExecuteCuda(const Model& model, const std::map<std::string, Tensor>& feeds,
                                    const CudaRunOptions& options = {});

}  // namespace memopt::cuda
