// A recompute candidate as a Graphviz DOT graph (`scan --show CLUSTER_ID --dot FILE.dot`):
//   * the recomputed forward nodes (boxes, in a "recompute" cluster; the entry node bold);
//   * the tensors they read from outside (ellipses; weights and graph inputs grey);
//   * the stashed tensors the plan frees (orange notes with shape and bytes at the dims);
//   * the backward nodes reading them (boxes in a "backward" cluster), with the number of their
//     other inputs in the label.
// Edges carry the tensor name and shape (what Netron users ask for). The text is deterministic;
// render it with `dot -Tsvg cand.dot -o cand.svg`.
#pragma once

#include <string>

#include "analysis/scan.h"
#include "ir/graph.h"
#include "report/candidate_subgraph.h"

namespace memopt {

std::string RenderCandidateDot(const Graph& graph, const ScanResult& scan, const CandidateSubgraph& candidate,
                               const DimBindings& dims);

/// A DOT double-quoted string: backslashes and quotes escaped, newlines as "\n".
std::string DotQuote(const std::string& text);

}  // namespace memopt
