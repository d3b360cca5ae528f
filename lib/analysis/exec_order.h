// Execution orders: a plain topological order (Kahn, smallest node id first) and ORT's
// MEMORY_EFFICIENT order (../shared/reference/ort_memory_optimizer.md §2.2, docs/scan.md):
//   1. max_distance[n] = longest path (in edges) from a source node to n;
//   2. forward = post-order of a reverse DFS from the YieldOp's input producers (seeded in input
//      edge order); at each node its producers are pushed sorted ascending by
//      (max_distance, node id), so the largest is explored first;
//   3. Shape/Size nodes whose first input producer is forward are placed right after it;
//   4. the YieldOp follows at position F = last_forward;
//   5. backward: a Kahn pass (FIFO, consumers released in node-id order) over the nodes that
//      depend on the YieldOp; the other backward nodes ("branch" nodes: recompute clones, ...)
//      are emitted lazily, right before the first main-path node that reads one of their
//      outputs; branch nodes nobody reads are emitted at the end, keyed by output name.
// Other boundaries (extensions, docs/boundary.md): kOverride seeds the DFS with the boundary
// node, kLoss with the other forward sinks (explored in node-id order) and then the loss node;
// their backward pass is a plain FIFO Kahn pass. kNone: DFS over all sinks, no backward.
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/boundary.h"
#include "ir/graph.h"
#include "ir/topo_order.h"
#include "util/status.h"

namespace memopt {

/// An execution order of the whole graph. position[node] = index in `order`.
struct ExecutionOrder {
  std::vector<NodeId> order;
  std::vector<int32_t> position;  ///< per node id; -1 when the node is not scheduled
  int32_t last_forward = -1;      ///< ORT's yield_order: positions <= this are forward; -1: none
  bool IsForward(NodeId n) const { return position[n] >= 0 && position[n] <= last_forward; }
  bool IsBackward(NodeId n) const { return position[n] > last_forward; }
};

/// An input edge of a node: producer node, producer output index, consumer input index.
struct InEdge {
  NodeId producer = kNone;
  int32_t src = -1;
  int32_t dst = -1;
};

/// The node's input edges (inputs produced by nodes), sorted by (producer, src, dst) as ORT
/// iterates them. Graph inputs and initializers make no edge.
std::vector<InEdge> InputEdges(const Graph& graph, NodeId node);


/// Longest distance (in edges) from any source node, per node id; `topo` is a topological order.
std::vector<int32_t> MaxDistances(const Graph& graph, const std::vector<NodeId>& topo);

/// ORT's MEMORY_EFFICIENT order for the given boundary (see the file comment).
Expected<ExecutionOrder> MemoryEfficientOrder(const Graph& graph, const Boundary& boundary);

/// Builds the position table for `order` (every node id < num_nodes at most once).
ExecutionOrder MakeExecutionOrder(size_t num_nodes, std::vector<NodeId> order, int32_t last_forward);

}  // namespace memopt
