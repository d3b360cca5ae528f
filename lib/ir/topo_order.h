// The one topological sort of the graph (shape inference, the gradient builder's selection and
// the analysis orders all use it).
#pragma once

#include <string_view>
#include <vector>

#include "ir/graph.h"
#include "util/status.h"

namespace memopt {

struct TopoOptions {
  /// Values a node depends on beside its inputs (the outer values its subgraphs read); nullptr:
  /// none.
  std::vector<ValueId> (*extra_inputs)(const Graph& graph, const Node& node) = nullptr;
  /// Appended to the cycle error, e.g. "shape inference needs an acyclic graph".
  std::string_view cycle_hint = "an ONNX graph must be acyclic";
};

/// Kahn's algorithm, always taking the ready node with the smallest id, so the order is the
/// proto order whenever that order is already topological. Producers come from the nodes'
/// outputs (not the cached links). A cycle is an error naming a node on it: "graph has a cycle
/// through node 'r1' (Relu): its inputs depend on its own outputs; <hint>".
Expected<std::vector<NodeId>> TopologicalOrder(const Graph& graph, const TopoOptions& options = {});

}  // namespace memopt
