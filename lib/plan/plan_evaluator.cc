#include "plan/plan_evaluator.h"

#include <algorithm>
#include <limits>

#include "analysis/plan_table.h"
#include "rewrite/recompute_rewrite.h"

namespace memopt {

Expected<PlanEvaluator> PlanEvaluator::Create(const Graph& graph, const ScanResult& scan, const DimBindings& dims,
                                              const CostModel& cost_model) {
  PlanEvaluator ev(graph, scan);
  MEMOPT_ASSIGN_OR_RETURN(ev.base_order_, RewriteBaseOrder(graph, scan));
  const size_t num_values = graph.values.size();
  ev.value_bytes_.assign(num_values, 0);
  ev.always_live_.assign(num_values, 0);
  for (size_t v = 0; v < num_values; ++v) {
    const Value& value = graph.values[v];
    std::optional<SymExpr> bytes = value.info.Bytes();
    if (bytes) {
      std::optional<Rational> r = EvaluateWithDefault(*bytes, dims, kUnboundDimForOrdering);
      // Sizes a sum could overflow count 0 (unsized), as in EstimatePeak; clones at most double
      // the values, hence the factor 2.
      const int64_t max_countable = std::numeric_limits<int64_t>::max() / static_cast<int64_t>(2 * num_values + 1);
      if (r && !r->overflow && r->den == 1 && r->num >= 0 && r->num <= max_countable) ev.value_bytes_[v] = r->num;
    }
    if (value.producer == kNone && (value.is_graph_input || value.initializer.has_value())) {
      ev.always_live_[v] = 1;
      ev.always_bytes_ += ev.value_bytes_[v];
    }
  }
  ev.node_cost_.reserve(graph.nodes.size());
  for (const Node& node : graph.nodes) {
    ev.node_cost_.push_back(EstimateNodeCost(graph, node, dims, cost_model));
    if (scan.order.IsForward(node.id)) ev.forward_flops_ += ev.node_cost_.back().flops;
  }
  return ev;
}

std::vector<NodeId> PlanEvaluator::ClonedNodes(const std::vector<size_t>& plans) const {
  std::vector<NodeId> nodes;
  for (size_t p : plans) {
    const std::vector<NodeId>& subgraph = scan_.plans[builder_.BasePlan(p)].subgraph;
    nodes.insert(nodes.end(), subgraph.begin(), subgraph.end());
  }
  std::sort(nodes.begin(), nodes.end());
  nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  return nodes;
}

double PlanEvaluator::CopyCostOf(const std::vector<size_t>& plans, PlanObjective objective) const {
  // With keeps (voiding splits before them) or private chains (copies that depend on the other
  // plans applied), the copies are counted on the rewrite itself.
  if (std::any_of(plans.begin(), plans.end(), [&](size_t p) { return builder_.IsKeep(p) || builder_.IsPrivate(p); })) {
    if (Expected<RewriteSpec> spec = builder_.Build(plans); spec.ok()) {
      double total = 0;
      for (const CloneSpec& clone : spec->clones) {
        if (clone.copy > 0) total += NodeCostOf(clone.original, objective);
      }
      return total;
    }
  }
  std::vector<size_t> splits;
  for (size_t p : plans) {
    if (builder_.IsSplit(p)) splits.push_back(p);
  }
  std::sort(splits.begin(), splits.end());
  splits.erase(std::unique(splits.begin(), splits.end()), splits.end());
  double total = 0;
  for (size_t s : splits) {
    for (NodeId n : scan_.plans[builder_.BasePlan(s)].subgraph) total += NodeCostOf(n, objective);
  }
  return total;
}

double PlanEvaluator::CostOf(const std::vector<size_t>& plans, PlanObjective objective) const {
  double total = CopyCostOf(plans, objective);
  for (NodeId n : ClonedNodes(plans)) total += NodeCostOf(n, objective);
  return total;
}

Expected<PlanEvaluation> PlanEvaluator::Evaluate(const std::vector<size_t>& plans, bool want_curve,
                                                 int64_t excess_threshold) const {
  MEMOPT_ASSIGN_OR_RETURN(RewriteSpec spec, builder_.Build(plans));
  std::vector<int32_t> node_order = RewrittenNodeOrder(graph_, spec, base_order_);
  RewrittenGraph rg = MaterializeRewrite(graph_, scan_, spec, node_order, /*full=*/false);
  MEMOPT_ASSIGN_OR_RETURN(ExecutionOrder order, RewrittenExecutionOrder(rg, scan_.order.last_forward + 1));

  PlanEvaluation out;
  for (const CloneSpec& clone : spec.clones) {
    const NodeCost& c = node_cost_[clone.original];
    out.added_flops += c.flops;
    out.added_bytes_moved += c.bytes;
    out.added_seconds += c.seconds;
  }
  out.nodes_added = static_cast<int>(spec.clones.size());

  const Graph& g = rg.graph;
  const int32_t steps = static_cast<int32_t>(order.order.size());
  const size_t num_original = spec.num_original_values;
  std::vector<int64_t> alloc_at(steps, 0), free_at(steps, 0);
  for (size_t v = 0; v < g.values.size(); ++v) {
    const int64_t size = v < num_original ? value_bytes_[v] : value_bytes_[spec.clone_values[v - num_original]];
    if (size == 0) continue;
    const Value& value = g.values[v];
    if (value.producer == kNone) continue;  // always live (counted in always_bytes_) or never produced
    const int32_t pos = order.position[value.producer];
    if (pos < 0) continue;
    alloc_at[pos] += size;
    if (value.is_graph_output) continue;
    int32_t last = pos;
    for (const auto& [consumer, slot] : value.consumers) last = std::max(last, order.position[consumer]);
    free_at[last] += size;
  }
  int64_t live = always_bytes_;
  out.peak_bytes = live;
  if (want_curve) {
    out.live_at_step.resize(steps);
    out.step_original.assign(steps, kNone);
    for (size_t n = 0; n < rg.new_id.size(); ++n) {
      if (rg.new_id[n] != kNone && order.position[rg.new_id[n]] >= 0) {
        out.step_original[order.position[rg.new_id[n]]] = static_cast<NodeId>(n);
      }
    }
  }
  for (int32_t i = 0; i < steps; ++i) {
    live += alloc_at[i];
    if (out.peak_position < 0 || live > out.peak_bytes) {
      out.peak_bytes = live;
      out.peak_position = i;
    }
    if (want_curve) out.live_at_step[i] = live;
    if (excess_threshold > 0 && live > excess_threshold) out.excess += static_cast<double>(live - excess_threshold);
    live -= free_at[i];
  }
  return out;
}

}  // namespace memopt
