// Stashed-activation candidates (../shared/reference/ort_memory_optimizer.md §2.3): forward
// outputs (with a non-empty name) that at least one backward node consumes. They are what the
// forward pass keeps alive for the backward pass, and what recompute plans try to free.
#pragma once

#include <vector>

#include "analysis/scan.h"
#include "ir/graph.h"

namespace memopt {

struct StashedCandidates {
  std::vector<NodeId> nodes;  ///< candidate nodes, in execution order
  /// Per node id: the stashed output indices, ascending (ORT: hash order); empty for non-candidates.
  std::vector<std::vector<int32_t>> outputs;
  /// Per value id: 1 when the value is a stashed output.
  std::vector<char> is_stashed_value;

  bool IsCandidate(NodeId n) const { return !outputs[n].empty(); }
};

StashedCandidates FindStashedCandidates(const Graph& graph, const ExecutionOrder& order);

}  // namespace memopt
