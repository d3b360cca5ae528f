#include "analysis/scan.h"

#include <fmt/format.h>

#include "analysis/boundary.h"
#include "analysis/exec_order.h"
#include "analysis/layer_boundary.h"
#include "analysis/op_table.h"
#include "analysis/peak_estimate.h"
#include "analysis/plan_table.h"
#include "analysis/recompute_search.h"
#include "analysis/stashed.h"

namespace memopt {

Expected<ScanResult> Scan(const Graph& graph, const ScanOptions& options) {
  if (options.level < 0 || options.level > 2) {
    return UsageError(fmt::format("recompute level must be 0, 1 or 2, got {}", options.level));
  }
  if (options.probe_level > 1) {
    return UsageError(fmt::format("probe level must be 0 (basic) or 1 (advanced), got {}", options.probe_level));
  }
  const int probe_level = options.probe_level >= 0 ? options.probe_level : (options.level == 0 ? 0 : 1);
  const bool layer_boundary = options.layer_boundary.value_or(options.level >= 1);
  const OpTable& table = options.op_table != nullptr ? *options.op_table : OpTable::Builtin();

  ScanResult result;
  MEMOPT_ASSIGN_OR_RETURN(result.boundary, FindBoundary(graph, options));
  MEMOPT_ASSIGN_OR_RETURN(result.order, MemoryEfficientOrder(graph, result.boundary));

  StashedCandidates stashed = FindStashedCandidates(graph, result.order);
  result.stashed_nodes = stashed.nodes;
  if (layer_boundary) {
    result.layer_boundaries = FindLayerBoundaryLayerNormNodes(graph, result.order, result.boundary);
  }

  RecomputeSearchOptions search_options;
  search_options.probe_level = probe_level;
  search_options.layer_boundary = layer_boundary;
  search_options.max_nodes = options.max_recompute_nodes;
  RecomputeSearchResult search =
      SearchRecomputePlans(graph, result.order, stashed, result.layer_boundaries, table, search_options);
  result.plans = std::move(search.plans);
  result.rejected = std::move(search.rejected);
  ComputePlanSavings(result.plans);
  result.groups = BuildPlanGroups(result.plans, result.order, options.level, options.dims);

  // YieldOp's outputs are the incoming gradients: ORT lists YieldOp as a candidate node, but its
  // outputs are not activations kept for backward, so the peak report does not count them as stashed.
  std::vector<char> stashed_activation = stashed.is_stashed_value;
  if (result.boundary.kind == Boundary::Kind::kYieldOp) {
    for (ValueId v : graph.node(result.boundary.node).outputs) {
      if (v != kNone) stashed_activation[v] = 0;
    }
  }
  result.peak = EstimatePeak(graph, result.order, stashed_activation, options.dims);
  return result;
}

}  // namespace memopt
