// ExecuteCuda: the node loop of the CPU executor (exec/node_loop.h) with device tensors and a CUDA
// backend. The order, the feed checks, the initializer reader, the release schedule and the error
// messages are the CPU executor's own, so both executors free the same values at the same steps.
#include "cuda_executor.h"

#include <exception>
#include <new>

#include "analysis/boundary.h"
#include "analysis/exec_order.h"
#include "exec/bind_inputs.h"
#include "exec/executor.h"
#include "exec/initializer_reader.h"
#include "exec/memory_tracker.h"
#include "exec/node_loop.h"
#include "device_arena.h"
#include "host_fallback.h"

namespace memopt::cuda {

namespace {

/// CUDA events (destroyed with the object): the two around the step, or one per node boundary
/// of a profiled run.
class Events {
 public:
  explicit Events(size_t count) : events_(count, nullptr) {}
  ~Events() {
    for (cudaEvent_t e : events_) {
      if (e != nullptr) cudaEventDestroy(e);
    }
  }
  Events(const Events&) = delete;
  Events& operator=(const Events&) = delete;
  Status Create() {
    for (cudaEvent_t& e : events_) MEMOPT_RETURN_IF_ERROR(CudaStatus(cudaEventCreate(&e), "cudaEventCreate"));
    return Status::Ok();
  }
  Status Record(size_t i, cudaStream_t s) { return CudaStatus(cudaEventRecord(events_[i], s), "cudaEventRecord"); }
  /// Waits for event j; milliseconds from event i to event j (both recorded).
  Expected<double> Elapsed(size_t i, size_t j) const {
    MEMOPT_RETURN_IF_ERROR(CudaStatus(cudaEventSynchronize(events_[j]), "cudaEventSynchronize"));
    float ms = 0;
    MEMOPT_RETURN_IF_ERROR(CudaStatus(cudaEventElapsedTime(&ms, events_[i], events_[j]), "cudaEventElapsedTime"));
    return static_cast<double>(ms);
  }

 private:
  std::vector<cudaEvent_t> events_;
};

/// The GPU side of the node loop (exec/node_loop.h): the CUDA kernel, or the CPU kernel on host
/// copies where the node runs on the host (host_fallback.h); with a profile, an event at each
/// node boundary.
struct CudaBackend {
  const CudaKernelRegistry& registry;
  Events* boundaries = nullptr;
  cudaStream_t stream = nullptr;
  /// With an arena (pool->arena()), the node's output slots are offered around its kernel and its
  /// outputs settled after it (cuda/device_arena.h).
  std::shared_ptr<DevicePool> pool;

  Status Run(const Node& node, CudaKernelContext& ctx) const {
    const bool arena = pool != nullptr && pool->arena() != nullptr;
    if (arena) pool->OfferSlots(node);
    Status status = RunKernel(node, ctx);
    if (arena) pool->EndOffer();
    MEMOPT_RETURN_IF_ERROR(status);
    if (arena) MEMOPT_RETURN_IF_ERROR(SettleOnDevice(*pool, pool, node, ctx));
    return Status::Ok();
  }
  Status RunKernel(const Node& node, CudaKernelContext& ctx) const {
    if (RunsOnHost(ctx, registry)) return RunOnHost(ctx, ctx.graph);
    const CudaKernelFn kernel = registry.Find(node.domain, node.op_type);
    if (kernel == nullptr) return Unsupported("node " + node.Describe() + ": no CUDA kernel for its input types");
    return kernel(ctx);
  }
  Status BeforeNode(int32_t, const Node&) { return Status::Ok(); }
  Status AfterNode(int32_t step, const Node&) {
    if (boundaries == nullptr) return Status::Ok();
    return boundaries->Record(static_cast<size_t>(step) + 1, stream);
  }
};

class CudaRun {
 public:
  CudaRun(const Model& model, const CudaRunOptions& options, const CudaKernelRegistry& registry)
      : model_(model), graph_(model.graph), options_(options), registry_(registry), values_(graph_.values.size()) {}

  Expected<CudaRunResult> Go(const std::map<std::string, Tensor>& feeds) {
    MEMOPT_RETURN_IF_ERROR(CheckSupported(graph_, registry_));
    MEMOPT_ASSIGN_OR_RETURN(order_, ResolveRunOrder(graph_, options_.order));
    if (options_.pool != nullptr) {
      pool_ = options_.pool;
    } else {
      MEMOPT_ASSIGN_OR_RETURN(pool_, DevicePool::Create());
    }
    CublasPtr cublas = options_.cublas;
    if (cublas == nullptr) {
      MEMOPT_ASSIGN_OR_RETURN(cublas, CreateCublas(pool_->stream()));
    }
    const int32_t steps = static_cast<int32_t>(order_.order.size());
    MemoryTracker tracker(graph_, order_.position, steps);

    CudaRunResult result;
    MEMOPT_ASSIGN_OR_RETURN(result.device_free_before, pool_->FreeBytesNow());
    pool_->ResetPeaks();
    // Graph inputs and initializers as the CPU executor binds them. Initializers no scheduled node
    // reads get an unwritten block of their size, so the pool counts the weights the way the
    // tracker (and the static estimate) does.
    InputSink sink;
    sink.bind = [this](ValueId v, const Tensor& host) { return Upload(v, host); };
    sink.unread_initializer = [this](ValueId, int64_t bytes) -> Status {
      MEMOPT_ASSIGN_OR_RETURN(void* block, pool_->Allocate(static_cast<size_t>(bytes)));
      placeholders_.emplace_back(block, [pool = pool_](void* p) { pool->Free(p); });
      return Status::Ok();
    };
    MEMOPT_RETURN_IF_ERROR(BindInputs(model_, order_.order, feeds, tracker, sink));
    const ArenaPlan* plan = options_.arena.get();
    if (plan != nullptr && plan->order == order_.order && plan->offset.size() == graph_.values.size()) {
      MEMOPT_RETURN_IF_ERROR(pool_->UseArena(options_.arena));
    } else {
      pool_->ClearArena();
    }

    CudaKernelContext ctx;
    ctx.pool = pool_;
    ctx.cublas = cublas.get();
    ctx.allow_tf32 = options_.allow_tf32;
    ctx.run_seed = options_.seed;
    ctx.output_grads = &options_.output_grads;
    ctx.graph = &graph_;
    const bool profile = options_.profile != nullptr;
    Events boundaries(profile ? static_cast<size_t>(steps) + 1 : 0);
    if (profile) MEMOPT_RETURN_IF_ERROR(boundaries.Create());
    Events timer(2);
    MEMOPT_RETURN_IF_ERROR(timer.Create());
    MEMOPT_RETURN_IF_ERROR(timer.Record(0, pool_->stream()));
    if (profile) MEMOPT_RETURN_IF_ERROR(boundaries.Record(0, pool_->stream()));
    CudaBackend backend{registry_, profile ? &boundaries : nullptr, pool_->stream(), pool_};
    MEMOPT_RETURN_IF_ERROR(RunNodeLoop(graph_, order_, values_, ctx, tracker, backend));
    MEMOPT_RETURN_IF_ERROR(timer.Record(1, pool_->stream()));
    MEMOPT_ASSIGN_OR_RETURN(result.step_ms, timer.Elapsed(0, 1));
    if (profile) {
      for (int32_t step = 0; step < steps; ++step) {
        const size_t i = static_cast<size_t>(step);
        MEMOPT_ASSIGN_OR_RETURN(const double ms, boundaries.Elapsed(i, i + 1));
        options_.profile->Add(graph_.node(order_.order[step]), ms);
      }
      options_.profile->EndRun();
    }
    MEMOPT_RETURN_IF_ERROR(pool_->Synchronize());  // first asynchronous kernel error, if any
    MEMOPT_ASSIGN_OR_RETURN(result.device_free_after, pool_->FreeBytesNow());

    MEMOPT_RETURN_IF_ERROR(
        CollectGraphOutputs(graph_, values_, [&](const std::string& name, const DeviceTensor& t) -> Status {
          MEMOPT_ASSIGN_OR_RETURN(result.outputs[name], t.Download());
          return Status::Ok();
        }));
    result.memory = tracker.Stats(graph_, order_.order);
    result.pool = pool_->stats();
    if (pool_->arena() != nullptr) result.arena = pool_->arena()->slots().use();
    return result;
  }

 private:
  Status Upload(ValueId v, const Tensor& host) {
    auto t = DeviceTensor::Upload(pool_, host);
    if (!t.ok()) return t.status().WithContext("'" + graph_.value(v).name + "'");
    values_[v] = std::move(t).value();
    return Status::Ok();
  }

  const Model& model_;
  const Graph& graph_;
  const CudaRunOptions& options_;
  const CudaKernelRegistry& registry_;
  std::shared_ptr<DevicePool> pool_;
  // Declared after pool_ so they are released before the run's reference to the pool goes.
  std::vector<DeviceTensor> values_;
  std::vector<std::shared_ptr<void>> placeholders_;
  ExecutionOrder order_;
};

}  // namespace

Expected<CudaRunResult> ExecuteCuda(const Model& model, const std::map<std::string, Tensor>& feeds,
                                    const CudaRunOptions& options) {
  try {
    const CudaKernelRegistry& registry =
        options.registry != nullptr ? *options.registry : CudaKernelRegistry::Builtin();
    CudaRunOptions with_arena;
    if (options.arena == nullptr && options.plan_arena && ArenaEnabled()) {
      auto plan = PlanRunArena(model, feeds, options.order);
      if (plan.ok()) {
        with_arena = options;
        with_arena.arena = *plan;
      }
    }
    CudaRun run(model, with_arena.arena != nullptr ? with_arena : options, registry);
    return run.Go(feeds);
  } catch (const std::bad_alloc&) {
    return InvalidInput("out of host memory while running the model on the GPU");
  } catch (const std::exception& e) {
    return InternalError(std::string("unexpected error while running the model on the GPU: ") + e.what());
  }
}

}  // namespace memopt::cuda
