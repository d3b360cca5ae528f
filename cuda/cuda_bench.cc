#include "cuda_bench.h"

#include "cuda_executor.h"
#include "cuda_kernel.h"
#include "device.h"

namespace memopt::cuda {

namespace {

class CudaBackend : public BenchBackend {
 public:
  CudaBackend(std::string gpu, bool allow_tf32) : gpu_(std::move(gpu)), allow_tf32_(allow_tf32) {}
  std::string name() const override { return "cuda"; }
  std::string gpu() const override { return gpu_; }
  Status CheckSupported(const Graph& graph) const override {
    return memopt::cuda::CheckSupported(graph, CudaKernelRegistry::Builtin());
  }
  Expected<BenchRuns> Run(const Model& model, const std::map<std::string, Tensor>& feeds,
                          const BenchRunOptions& options) const override {
    MEMOPT_RETURN_IF_ERROR(CheckSupported(model.graph));
    CudaRunOptions run_options;
    run_options.seed = options.seed;
    run_options.allow_tf32 = allow_tf32_;
    run_options.output_grads = options.output_grads;
    MEMOPT_ASSIGN_OR_RETURN(run_options.pool, DevicePool::Create());
    MEMOPT_ASSIGN_OR_RETURN(run_options.cublas, CreateCublas(run_options.pool->stream()));
    BenchRuns out;
    // One arena for every iteration (its device memory kept by the pool), as on the CPU.
    run_options.arena = PlanBenchArena(model, feeds, out);
    run_options.plan_arena = false;  // none where it cannot be planned, and none planned per run
    const int total = options.warmup + options.iters;
    for (int i = 0; i < total; ++i) {
      run_options.profile = i >= options.warmup ? options.profile : nullptr;
      MEMOPT_ASSIGN_OR_RETURN(CudaRunResult run, ExecuteCuda(model, feeds, run_options));
      if (i >= options.warmup) out.times_ms.push_back(run.step_ms);
      if (options.on_run) options.on_run(i + 1);
      if (i + 1 == total) {
        out.memory = run.memory;
        out.arena_use = run.arena;
        out.pool_peak_requested = run.pool.peak_requested;
        out.pool_peak_reserved = run.pool.peak_reserved;
        out.device_free_before = run.device_free_before;
        out.device_free_after = run.device_free_after;
        out.outputs = std::move(run.outputs);
      }
    }
    return out;
  }

 private:
  std::string gpu_;
  bool allow_tf32_ = false;
};

}  // namespace

Expected<std::unique_ptr<BenchBackend>> CudaBenchBackend(bool allow_tf32) {
  MEMOPT_ASSIGN_OR_RETURN(auto device, ProbeDevice(0));
  return std::unique_ptr<BenchBackend>(std::make_unique<CudaBackend>(Describe(device), allow_tf32));
}

}  // namespace memopt::cuda
