// Execute: binds feeds and initializers, runs every node of the order through its CPU kernel,
// frees each value after its last consumer, and measures live bytes with the rules of the static
// peak estimate (memory_tracker.h).
#include "exec/executor.h"

#include <chrono>
#include <exception>
#include <map>
#include <new>
#include <set>

#include "analysis/boundary.h"
#include "analysis/exec_order.h"
#include "analysis/scan.h"
#include "exec/bind_inputs.h"
#include "exec/initializer_reader.h"
#include "exec/input_binding.h"
#include "exec/memory_tracker.h"

namespace memopt {

namespace {

std::string OpName(const Node& node) { return OpKey::Of(node).ToString(); }

/// Adds the node context to a kernel error that does not name its node yet.
Status WithNode(const Node& node, Status status) {
  if (status.ok() || status.message().rfind("node '", 0) == 0) return status;
  return status.WithContext("node " + node.Describe());
}

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
    for (int32_t step = 0; step < steps; ++step) {
      const Node& node = graph_.node(order_.order[step]);
      if (options_.profile != nullptr) {
        const auto node_start = std::chrono::steady_clock::now();
        MEMOPT_RETURN_IF_ERROR(RunNode(node, ctx));
        options_.profile->Add(
            node, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - node_start).count());
      } else {
        MEMOPT_RETURN_IF_ERROR(RunNode(node, ctx));
      }
      for (size_t j = 0; j < node.outputs.size(); ++j) {
        const ValueId v = node.outputs[j];
        if (v == kNone) continue;
        values_[v] = std::move(ctx.outputs[j]);
        tracker.Allocate(v, values_[v].bytes());
      }
      tracker.CheckPeak(step, node.id);
      for (ValueId v : tracker.ReleasesAt(step)) {
        values_[v] = Tensor();  // drop the reference: the buffer goes when no view shares it
        tracker.Release(v);
      }
    }
    result.elapsed_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (options_.profile != nullptr) options_.profile->EndRun();

    for (ValueId v : graph_.outputs) {
      const Value& value = graph_.value(v);
      if (!values_[v].defined()) {
        return InvalidInput("graph output '" + value.name + "' was not computed (its producer is not in the order)");
      }
      result.outputs[value.name] = values_[v];
    }
    result.memory = tracker.Stats(graph_, order_.order);
    return result;
  }

 private:
  Status RunNode(const Node& node, KernelContext& ctx) {
    const KernelInfo* kernel = registry_.Find(node.domain, node.op_type);
    if (kernel == nullptr || kernel->fn == nullptr) return Unsupported("no kernel for " + OpName(node));
    ctx.node = &node;
    ctx.inputs.assign(node.inputs.size(), nullptr);
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const ValueId v = node.inputs[i];
      if (v == kNone) continue;
      if (!values_[v].defined()) {
        const Value& value = graph_.value(v);
        std::string why = value.producer != kNone && order_.position[value.producer] < 0
                              ? "its producer " + graph_.node(value.producer).Describe() + " is not in the order"
                              : "it is not computed before this node in the order";
        return InvalidInput("node " + node.Describe() + ": input '" + value.name + "' is not available (" + why + ")");
      }
      ctx.inputs[i] = &values_[v];
    }
    ctx.outputs.clear();
    ctx.outputs.resize(node.outputs.size());
    Status status;
    try {
      status = kernel->fn(ctx);
    } catch (const std::bad_alloc&) {
      std::string outputs;
      for (ValueId v : node.outputs) {
        if (v == kNone) continue;
        const Value& value = graph_.value(v);
        outputs += (outputs.empty() ? "'" : ", '") + value.name + "' " + DataTypeName(value.info.dtype) +
                   (value.info.shape ? ShapeToString(*value.info.shape) : std::string("[?]"));
      }
      status = InvalidInput("out of memory allocating its outputs (" + outputs +
                            "): more memory than this process can allocate");
    } catch (const std::exception& e) {
      status = InternalError(std::string("kernel threw: ") + e.what());
    }
    MEMOPT_RETURN_IF_ERROR(WithNode(node, status));
    for (size_t j = 0; j < node.outputs.size(); ++j) {
      if (node.outputs[j] != kNone && !ctx.outputs[j].defined()) {
        return InternalError("node " + node.Describe() + ": kernel did not produce output " + std::to_string(j) +
                             " ('" + graph_.value(node.outputs[j]).name + "')");
      }
    }
    return Status::Ok();
  }

  const Model& model_;
  const Graph& graph_;
  const RunOptions& options_;
  const KernelRegistry& registry_;
  std::vector<Tensor> values_;
  ExecutionOrder order_;
};

}  // namespace

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

Expected<RunResult> Execute(const Model& model, const std::map<std::string, Tensor>& feeds,
                            const RunOptions& options) {
  try {
    const KernelRegistry& registry = options.registry != nullptr ? *options.registry : KernelRegistry::Cpu();
    Run run(model, options, registry);
    return run.Go(feeds);
  } catch (const std::bad_alloc&) {
    return InvalidInput("out of memory while running the model");
  } catch (const std::exception& e) {
    return InternalError(std::string("unexpected error while running the model: ") + e.what());
  }
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
