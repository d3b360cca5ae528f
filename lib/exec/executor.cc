// Execute: binds feeds and initializers, runs the order through the node loop both executors share
// (node_loop.h) with the CPU kernels, which frees each value after its last consumer and measures
// live bytes with the rules of the static peak estimate (memory_tracker.h).
#include "exec/executor.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>
#include <new>
#include <optional>
#include <set>

#include "analysis/boundary.h"
#include "analysis/exec_order.h"
#include "analysis/scan.h"
#include "exec/bind_inputs.h"
#include "exec/initializer_reader.h"
#include "exec/input_binding.h"
#include "exec/memory_tracker.h"
#include "exec/node_loop.h"

namespace memopt {

namespace {

std::string OpName(const Node& node) { return OpKey::Of(node).ToString(); }

/// The CPU side of the node loop: the registry's kernel, and with a profile the wall-clock time
/// of each node.
/// With an arena, the node's output slots are offered to its kernel and its outputs settled after
/// it (exec/arena_allocator.h).
struct CpuBackend {
  const KernelRegistry& registry;
  OpProfile* profile = nullptr;
  ArenaAllocator* arena = nullptr;
  std::chrono::steady_clock::time_point node_start;

  Status Run(const Node& node, KernelContext& ctx) {
    const KernelInfo* kernel = registry.Find(node.domain, node.op_type);
    if (kernel == nullptr || kernel->fn == nullptr) return Unsupported("no kernel for " + OpName(node));
    ArenaAllocator::Offer offer(arena, node);
    Status status = kernel->fn(ctx);
    offer.End();
    if (arena != nullptr && status.ok()) arena->Settle(node, ctx);
    return status;
  }
  Status BeforeNode(int32_t, const Node&) {
    if (profile != nullptr) node_start = std::chrono::steady_clock::now();
    return Status::Ok();
  }
  Status AfterNode(int32_t, const Node& node) {
    if (profile != nullptr) {
      profile->Add(node,
                   std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - node_start).count());
    }
    return Status::Ok();
  }
};

class Run {
 public:
  Run(const Model& model, const RunOptions& options, const KernelRegistry& registry)
      : model_(model), graph_(model.graph), options_(options), registry_(registry), values_(graph_.values.size()) {}

  Expected<RunResult> Go(const std::map<std::string, Tensor>& feeds) {
    MEMOPT_RETURN_IF_ERROR(CheckSupported(graph_, registry_));
    MEMOPT_ASSIGN_OR_RETURN(order_, ResolveRunOrder(graph_, options_.order));
    const int32_t steps = static_cast<int32_t>(order_.order.size());
    MemoryTracker tracker(graph_, order_.position, steps);
    InputSink sink;
    sink.bind = [this](ValueId v, const Tensor& t) {
      values_[v] = t;  // shares the buffer
      return Status::Ok();
    };
    MEMOPT_RETURN_IF_ERROR(BindInputs(model_, order_.order, feeds, tracker, sink));

    RunResult result;
    const auto start = std::chrono::steady_clock::now();
    KernelContext ctx;
    ctx.run_seed = options_.seed;
    ctx.output_grads = &options_.output_grads;
    ctx.graph = &graph_;
    std::optional<ArenaAllocator> arena;
    const ArenaPlan* plan = options_.arena.get();
    if (plan != nullptr && plan->order == order_.order && plan->offset.size() == graph_.values.size()) {
      arena.emplace(options_.arena);
    }
    CpuBackend backend{registry_, options_.profile, arena ? &*arena : nullptr, {}};
    MEMOPT_RETURN_IF_ERROR(RunNodeLoop(graph_, order_, values_, ctx, tracker, backend));
    result.elapsed_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (options_.profile != nullptr) options_.profile->EndRun();

    MEMOPT_RETURN_IF_ERROR(CollectGraphOutputs(graph_, values_, [&](const std::string& name, const Tensor& t) {
      result.outputs[name] = t;
      return Status::Ok();
    }));
    result.memory = tracker.Stats(graph_, order_.order);
    if (arena) result.arena = arena->use();
    return result;
  }

 private:
  const Model& model_;
  const Graph& graph_;
  const RunOptions& options_;
  const KernelRegistry& registry_;
  std::vector<Tensor> values_;
  ExecutionOrder order_;
};

}  // namespace

bool ArenaEnabled() {
  static const bool on = [] {
    const char* env = std::getenv("MEMOPT_ARENA");
    return env == nullptr || std::strcmp(env, "0") != 0;
  }();
  return on;
}

Status CheckSupported(const Graph& graph, const KernelRegistry& registry) {
  std::map<std::string, std::string> missing;  // op key -> first node
  for (const Node& node : graph.nodes) {
    const KernelInfo* info = registry.Find(node.domain, node.op_type);
    std::string key = OpName(node);
    if (info != nullptr) {
      if (info->node_check == nullptr) continue;
      const std::string what = info->node_check(node);
      if (what.empty()) continue;
      key += " " + what;
    }
    const std::string shown = node.name.empty() ? node.op_type + "#" + std::to_string(node.id) : node.name;
    missing.emplace(key, shown);
  }
  if (missing.empty()) return Status::Ok();
  std::string list;
  for (const auto& [op, node] : missing) list += (list.empty() ? "" : ", ") + op + " (node '" + node + "')";
  return Unsupported("unsupported ops: " + list);
}

Expected<RunResult> Execute(const Model& model, const std::map<std::string, Tensor>& feeds, const RunOptions& options) {
  try {
    const KernelRegistry& registry = options.registry != nullptr ? *options.registry : KernelRegistry::Cpu();
    RunOptions with_arena;
    if (options.arena == nullptr && ArenaEnabled()) {
      auto plan = PlanRunArena(model, feeds, options.order);
      if (plan.ok()) {
        with_arena = options;
        with_arena.arena = *plan;
      }
    }
    Run run(model, with_arena.arena != nullptr ? with_arena : options, registry);
    return run.Go(feeds);
  } catch (const std::bad_alloc&) {
    return InvalidInput("out of memory while running the model");
  } catch (const std::exception& e) {
    return InternalError(std::string("unexpected error while running the model: ") + e.what());
  }
}

Expected<std::shared_ptr<const ArenaPlan>> PlanRunArena(const Model& model, const std::map<std::string, Tensor>& feeds,
                                                        const std::vector<NodeId>& order) {
  MEMOPT_ASSIGN_OR_RETURN(ExecutionOrder resolved, ResolveRunOrder(model.graph, order));
  MEMOPT_ASSIGN_OR_RETURN(ArenaPlan plan, PlanArena(model.graph, resolved, DimsFromFeeds(model.graph, feeds)));
  return std::make_shared<const ArenaPlan>(std::move(plan));
}

Expected<ExecutionOrder> ResolveRunOrder(const Graph& graph, const std::vector<NodeId>& order) {
  if (order.empty()) {
    ScanOptions scan_options;
    MEMOPT_ASSIGN_OR_RETURN(Boundary boundary, FindBoundary(graph, scan_options));
    return MemoryEfficientOrder(graph, boundary);
  }
  std::vector<char> seen(graph.nodes.size(), 0);
  for (NodeId n : order) {
    if (n < 0 || static_cast<size_t>(n) >= graph.nodes.size()) {
      return InvalidInput("execution order names node id " + std::to_string(n) + ", the graph has " +
                          std::to_string(graph.nodes.size()) + " nodes");
    }
    if (seen[n]++) return InvalidInput("execution order lists node " + graph.node(n).Describe() + " twice");
  }
  return MakeExecutionOrder(graph.nodes.size(), order, -1);
}

}  // namespace memopt
