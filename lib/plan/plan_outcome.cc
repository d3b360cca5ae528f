#include "plan/plan_outcome.h"

#include <algorithm>
#include <map>

#include "analysis/peak_estimate.h"
#include "analysis/plan_table.h"
#include "analysis/stashed.h"

namespace memopt {
namespace {

int64_t BytesAt(const Value& v, const DimBindings& dims) {
  std::optional<SymExpr> b = v.info.Bytes();
  if (!b) return 0;
  std::optional<Rational> r = EvaluateWithDefault(*b, dims, kUnboundDimForOrdering);
  if (!r || r->overflow || r->den != 1 || r->num < 0) return 0;
  return r->num;
}

}  // namespace

StashedTotal StashedActivations(const Graph& graph, const ExecutionOrder& order, const Boundary& boundary,
                                const DimBindings& dims) {
  StashedTotal total;
  StashedCandidates stashed = FindStashedCandidates(graph, order);
  total.is_stashed_value = std::move(stashed.is_stashed_value);
  if (boundary.kind == Boundary::Kind::kYieldOp && boundary.node != kNone) {
    for (ValueId v : graph.nodes[boundary.node].outputs) {
      if (v != kNone) total.is_stashed_value[v] = 0;
    }
  }
  for (size_t v = 0; v < graph.values.size(); ++v) {
    if (!total.is_stashed_value[v]) continue;
    ++total.values;
    total.bytes += BytesAt(graph.values[v], dims);
    if (std::optional<SymExpr> b = graph.values[v].info.Bytes()) total.expr += *b;
  }
  return total;
}

Expected<PlanOutcome> EvaluatePlanExactly(const Graph& graph, const ScanResult& scan, const std::vector<size_t>& plans,
                                          const DimBindings& dims, const CostModel& cost_model) {
  PlanOutcome out;
  RewriteSpecBuilder builder(graph, scan);
  MEMOPT_ASSIGN_OR_RETURN(out.spec, builder.Build(plans));
  MEMOPT_ASSIGN_OR_RETURN(out.rewritten, RewriteGraph(graph, scan, out.spec));
  const Graph& g = out.rewritten.graph;
  out.stashed = StashedActivations(g, out.rewritten.order, out.rewritten.boundary, dims);
  out.peak = EstimatePeak(g, out.rewritten.order, out.stashed.is_stashed_value, dims);
  for (const CloneSpec& clone : out.spec.clones) {
    NodeCost c = EstimateNodeCost(graph, graph.nodes[clone.original], dims, cost_model);
    out.added_flops += c.flops;
    out.added_bytes_moved += c.bytes;
    out.added_seconds += c.seconds;
  }
  out.nodes_added = static_cast<int>(out.spec.clones.size());
  out.rewired_inputs = static_cast<int>(out.spec.rewires.size());
  return out;
}

Expected<std::vector<PeakRaiser>> FindPeakRaisers(const Graph& graph, const ScanResult& scan,
                                                  const std::vector<size_t>& plans, const DimBindings& dims) {
  std::vector<PeakRaiser> out;
  if (!scan.peak.sized) return out;
  std::vector<std::string> entries;
  std::map<std::string, std::vector<size_t>> by_entry;
  const RewriteSpecBuilder builder(graph, scan);
  for (size_t p : plans) {
    const std::string entry = PlanConfig(scan.plans[builder.BasePlan(p)]);
    if (!by_entry.count(entry)) entries.push_back(entry);
    by_entry[entry].push_back(p);
  }
  for (const std::string& entry : entries) {
    MEMOPT_ASSIGN_OR_RETURN(PlanOutcome alone, EvaluatePlanExactly(graph, scan, by_entry[entry], dims));
    if (alone.peak.sized && alone.peak.peak_bytes > scan.peak.peak_bytes) out.push_back({entry, alone.peak.peak_bytes});
  }
  return out;
}

std::vector<LiveValue> LiveAt(const Graph& graph, const ExecutionOrder& order, int32_t position,
                              const DimBindings& dims) {
  std::vector<LiveValue> out;
  for (size_t v = 0; v < graph.values.size(); ++v) {
    const Value& value = graph.values[v];
    const int64_t bytes = BytesAt(value, dims);
    if (bytes == 0) continue;
    if (value.producer == kNone) {
      if (value.is_graph_input || value.initializer.has_value()) {
        out.push_back({static_cast<ValueId>(v), bytes, true});
      }
      continue;
    }
    const int32_t pos = order.position[value.producer];
    if (pos < 0 || pos > position) continue;
    int32_t last = value.is_graph_output ? static_cast<int32_t>(order.order.size()) : pos;
    for (const auto& [c, slot] : value.consumers) last = std::max(last, order.position[c]);
    if (last >= position) out.push_back({static_cast<ValueId>(v), bytes, false});
  }
  std::sort(out.begin(), out.end(), [](const LiveValue& a, const LiveValue& b) {
    return a.bytes != b.bytes ? a.bytes > b.bytes : a.value < b.value;
  });
  return out;
}

}  // namespace memopt
