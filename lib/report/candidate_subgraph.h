// One recompute candidate as a picture's worth of graph (`scan --show CLUSTER_ID`): the forward
// nodes a plan recomputes, the tensors they read, the stashed tensors the plan frees, and the
// backward nodes that read those tensors. Rendered as text (here), Graphviz DOT (dot.h) or a
// small ONNX model for Netron (extract.h).
//
// Selector syntax: CLUSTER[@OCCURRENCE][:TYPE[:COUNT]]
//   CLUSTER     the cluster id of the plan table ("Gelu+", "BiasGelu+Dropout+");
//   OCCURRENCE  0-based, in execution order of the entry nodes (as config selectors count them);
//               default 0;
//   TYPE        1 recompute, 2 compromised recompute; default: 1 when the cluster has a type-1
//               plan, else 2; COUNT is accepted (so a plan-table config string works) and ignored.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "analysis/scan.h"
#include "ir/graph.h"
#include "util/status.h"

namespace memopt {

struct CandidateSelector {
  std::string cluster_id;
  int type = 0;        ///< 0 = automatic
  int occurrence = 0;
  std::string text;    ///< as given, for messages
};

/// Errors are usage errors quoting the text.
Expected<CandidateSelector> ParseCandidateSelector(const std::string& text);

/// The plan the selector names: an index into ScanResult::plans. Errors (usage): unknown cluster
/// id (with a did-you-mean and the ids the graph has), no plan of that type, occurrence past the
/// last one.
Expected<size_t> FindCandidatePlan(const ScanResult& scan, const CandidateSelector& selector);

struct CandidateSubgraph {
  size_t plan = 0;                 ///< index into ScanResult::plans
  int occurrence = 0;              ///< 0-based, execution order of entries
  int occurrences = 0;             ///< plans of this cluster id and type
  std::vector<NodeId> recompute;   ///< the plan's subgraph, execution order, entry last
  std::vector<ValueId> inputs;     ///< read by `recompute`, produced outside it; first-use order
  std::vector<ValueId> stashed;    ///< the entry's stashed outputs the plan frees
  std::vector<NodeId> consumers;   ///< backward nodes reading a stashed output, execution order
  /// Inputs of `consumers` other than the stashed tensors and the recompute's values (first-use
  /// order): gradients flowing in, other activations.
  std::vector<ValueId> consumer_inputs;
};

CandidateSubgraph BuildCandidateSubgraph(const Graph& graph, const ScanResult& scan, size_t plan);

/// The text view `scan --show` prints: the plan, each recomputed node with what it reads, the
/// stashed tensors with their sizes at `dims`, and the backward consumers.
std::string RenderCandidateText(const Graph& graph, const ScanResult& scan, const CandidateSubgraph& candidate,
                                const DimBindings& dims);

/// "float16[batch, 512, 768]"; "float[?]" when the rank is unknown.
std::string ValueTypeText(const Value& value);
/// "25.17 MiB" at dims, or the symbolic byte count when a dim is unbound, or "unknown".
std::string ValueBytesText(const Value& value, const DimBindings& dims);

}  // namespace memopt
