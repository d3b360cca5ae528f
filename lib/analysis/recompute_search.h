// Recompute subgraph search per stashed node (../shared/reference/ort_memory_optimizer.md
// §3.1, §3.2, §3.7): a level-by-level BFS from the node's stashed outputs towards its inputs,
// through recomputable ops, stopping at stashed tensors (they stay available), graph inputs,
// initializers, ignorable inputs and small static tensors (< 2^20 elements in ONNX Runtime's
// table, < 1024 in memopt's extended one: OpTable::small_static_elements). A
// non-recomputable, non-stashed producer makes the plan fail. When a widening Cast was met, a
// compromise (type 2) search stops at that Cast and saves 1 - in/out of the bytes: a second plan
// of the node, as ONNX Runtime 1.19.2 makes it (RecomputeSearchOptions).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "analysis/op_table.h"
#include "analysis/scan.h"
#include "analysis/stashed.h"
#include "ir/graph.h"

namespace memopt {

struct RecomputeSearchOptions {
  int probe_level = 1;          ///< 0 basic, 1 advanced op table
  bool layer_boundary = false;  ///< gate stashed inputs of layer-boundary LayerNorms
  size_t max_nodes = 0;         ///< subgraph size limit; 0 = none (ORT HEAD); 15/50 = older ORT
  /// false (ORT 1.19.2, the release): a node whose full search met a widening Cast also gets a
  /// compromise (type 2) plan; true (ORT's later sources): only when the full search failed.
  bool compromise_only_on_failure = false;
};

struct RecomputeSearchResult {
  std::vector<RecomputePlan> plans;         ///< reverse execution order of entries (ORT's walk)
  std::vector<RejectedCandidate> rejected;  ///< execution order
};

/// Searches a plan for every stashed candidate node, walking them in reverse execution order.
/// Plans carry entry, outputs (with bytes), subgraph, compromise, save_ratio and cluster_id;
/// `saving` is left for plan_table.
RecomputeSearchResult SearchRecomputePlans(const Graph& graph, const ExecutionOrder& order,
                                           const StashedCandidates& stashed,
                                           const std::vector<NodeId>& layer_boundaries, const OpTable& table,
                                           const RecomputeSearchOptions& options);

/// Op types of `subgraph` (already in execution order), each followed by '+': "Expand+Tile+".
std::string ClusterId(const Graph& graph, const std::vector<NodeId>& subgraph);

/// In/out element-size ratio of a Cast (e.g. 1/2 for fp16 -> fp32); 1 for other ops, string
/// or unknown types.
Rational CastSizeRatio(const Graph& graph, const Node& node);

}  // namespace memopt
