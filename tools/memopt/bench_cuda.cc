#include "bench_cuda.h"

#ifdef MEMOPT_HAVE_CUDA

#include "cuda_executor.h"

namespace memopt::cli {

Expected<CudaBench> BenchOnCuda(const Model& model, const std::map<std::string, Tensor>& feeds, int warmup,
                                int iters, uint64_t seed, bool allow_tf32, const OutputGradients& output_grads,
                                const std::function<void(int)>& on_run, OpProfile* profile) {
  MEMOPT_RETURN_IF_ERROR(cuda::CheckSupported(model.graph, cuda::CudaKernelRegistry::Builtin()));
  cuda::CudaRunOptions options;
  options.seed = seed;
  options.allow_tf32 = allow_tf32;
  options.output_grads = output_grads;
  MEMOPT_ASSIGN_OR_RETURN(options.pool, cuda::DevicePool::Create());
  MEMOPT_ASSIGN_OR_RETURN(options.cublas, cuda::CreateCublas(options.pool->stream()));
  CudaBench bench;
  for (int i = 0; i < warmup + iters; ++i) {
    options.profile = i >= warmup ? profile : nullptr;
    MEMOPT_ASSIGN_OR_RETURN(cuda::CudaRunResult run, cuda::ExecuteCuda(model, feeds, options));
    if (i >= warmup) bench.times_ms.push_back(run.step_ms);
    if (on_run) on_run(i + 1);
    if (i + 1 == warmup + iters) {
      bench.memory = run.memory;
      bench.pool = run.pool;
      bench.device_free_before = run.device_free_before;
      bench.device_free_after = run.device_free_after;
      bench.outputs = std::move(run.outputs);
    }
  }
  return bench;
}

}  // namespace memopt::cli

#endif  // MEMOPT_HAVE_CUDA
