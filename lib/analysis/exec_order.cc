#include "analysis/exec_order.h"

#include <algorithm>
#include <deque>
#include <functional>
#include <queue>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "analysis/boundary.h"

namespace memopt {
namespace {

bool IsShapeOrSize(const Node& node) { return node.op_type == "Shape" || node.op_type == "Size"; }

// Consumers of every output of `node` for which `keep(consumer)` holds and whose remaining
// in-degree drops to zero, in node-id order (ORT walks output edges sorted by consumer id).
template <typename Keep>
void ReleaseConsumers(const Graph& graph, NodeId node, std::vector<int32_t>& in_degree, Keep keep,
                      std::vector<NodeId>& released) {
  released.clear();
  for (ValueId v : graph.nodes[node].outputs) {
    if (v == kNone) continue;
    for (const auto& [consumer, slot] : graph.values[v].consumers) {
      if (!keep(consumer)) continue;
      if (--in_degree[consumer] == 0) released.push_back(consumer);
    }
  }
  std::sort(released.begin(), released.end());
}

// Reverse DFS post-order from `seeds` (pushed in the given order; the last one is explored
// first). Producers are pushed sorted ascending by (max_distance, id).
std::vector<NodeId> ReverseDfsPostOrder(const Graph& graph, const std::vector<NodeId>& seeds,
                                        const std::vector<int32_t>& max_distance) {
  std::vector<NodeId> post_order;
  std::vector<char> visited(graph.nodes.size(), 0);
  std::vector<std::pair<NodeId, bool>> stack;  // (node, leave)
  for (NodeId s : seeds) stack.emplace_back(s, false);
  std::vector<NodeId> producers;
  while (!stack.empty()) {
    auto [n, leave] = stack.back();
    stack.pop_back();
    if (leave) {
      post_order.push_back(n);
      continue;
    }
    if (visited[n]) continue;
    visited[n] = 1;
    stack.emplace_back(n, true);
    producers.clear();
    for (const InEdge& e : InputEdges(graph, n)) producers.push_back(e.producer);
    std::sort(producers.begin(), producers.end(), [&](NodeId a, NodeId b) {
      return std::pair(max_distance[a], a) < std::pair(max_distance[b], b);
    });
    for (NodeId p : producers) {
      if (!visited[p]) stack.emplace_back(p, false);
    }
  }
  return post_order;
}

// Nodes with no consumer node, in id order.
std::vector<NodeId> Sinks(const Graph& graph, const std::vector<char>* only) {
  std::vector<NodeId> sinks;
  for (const Node& node : graph.nodes) {
    if (only != nullptr && !(*only)[node.id]) continue;
    bool consumed = false;
    for (ValueId v : node.outputs) {
      if (v == kNone) continue;
      for (const auto& [consumer, slot] : graph.values[v].consumers) {
        if (only == nullptr || (*only)[consumer]) consumed = true;
      }
    }
    if (!consumed) sinks.push_back(node.id);
  }
  return sinks;
}

class OrderBuilder {
 public:
  OrderBuilder(const Graph& graph, const std::vector<int32_t>& max_distance)
      : graph_(graph), max_distance_(max_distance), placed_(graph.nodes.size(), 0) {}

  // Steps 2 and 3: the forward DFS plus Shape/Size relocation.
  void EmitForward(const std::vector<NodeId>& seeds) {
    std::vector<NodeId> dfs = ReverseDfsPostOrder(graph_, seeds, max_distance_);
    shape_size_children_.assign(graph_.nodes.size(), {});
    relocatable_.assign(graph_.nodes.size(), 0);
    for (const Node& node : graph_.nodes) {
      if (!IsShapeOrSize(node)) continue;
      std::vector<InEdge> edges = InputEdges(graph_, node.id);
      if (edges.empty()) continue;
      shape_size_children_[edges.front().producer].push_back(node.id);
      relocatable_[node.id] = 1;
    }
    for (NodeId n : dfs) {
      // A Shape/Size node found by the DFS has its producer in the DFS too; it is placed right
      // after that producer instead.
      if (relocatable_[n]) continue;
      Emit(n);
    }
  }

  void Append(NodeId n) {
    order_.push_back(n);
    placed_[n] = 1;
  }

  // Step 5 for YieldOp-style boundaries.
  void EmitBackwardLazy(NodeId root) {
    const size_t num_nodes = graph_.nodes.size();
    // Main path: nodes that depend on the root.
    std::vector<char> main(num_nodes, 0);
    std::deque<NodeId> queue = {root};
    while (!queue.empty()) {
      NodeId n = queue.front();
      queue.pop_front();
      for (ValueId v : graph_.nodes[n].outputs) {
        if (v == kNone) continue;
        for (const auto& [c, slot] : graph_.values[v].consumers) {
          if (!placed_[c] && !main[c]) {
            main[c] = 1;
            queue.push_back(c);
          }
        }
      }
    }
    branch_.assign(num_nodes, 0);
    for (NodeId n = 0; n < static_cast<NodeId>(num_nodes); ++n) branch_[n] = !placed_[n] && !main[n];
    RankBranchNodes();

    std::vector<int32_t> in_degree(num_nodes, 0);
    for (NodeId n = 0; n < static_cast<NodeId>(num_nodes); ++n) {
      if (!main[n]) continue;
      for (ValueId v : graph_.nodes[n].inputs) {
        if (v != kNone && graph_.values[v].producer != kNone && main[graph_.values[v].producer]) ++in_degree[n];
      }
    }
    auto is_main = [&](NodeId c) { return main[c] != 0; };
    std::deque<NodeId> ready;
    std::vector<NodeId> released;
    {
      // The root itself is already placed; it releases its consumers like any processed node.
      std::vector<NodeId> first;
      for (ValueId v : graph_.nodes[root].outputs) {
        if (v == kNone) continue;
        for (const auto& [c, slot] : graph_.values[v].consumers) {
          if (main[c] && in_degree[c] == 0) first.push_back(c);
        }
      }
      std::sort(first.begin(), first.end());
      first.erase(std::unique(first.begin(), first.end()), first.end());
      ready.assign(first.begin(), first.end());
    }
    std::vector<NodeId> batch;
    while (!ready.empty()) {
      NodeId n = ready.front();
      ready.pop_front();
      batch.clear();
      for (ValueId v : graph_.nodes[n].inputs) {
        if (v == kNone) continue;
        NodeId p = graph_.values[v].producer;
        if (p != kNone && branch_[p] && !placed_[p]) CollectBranch(p, batch);
      }
      AppendBranchBatch(batch);
      Append(n);
      ReleaseConsumers(graph_, n, in_degree, is_main, released);
      ready.insert(ready.end(), released.begin(), released.end());
    }
    // Branch nodes no main-path node reads: keyed by their unread outputs, sorted by name.
    std::vector<std::pair<std::string, ValueId>> unused;
    for (NodeId n = 0; n < static_cast<NodeId>(num_nodes); ++n) {
      if (!branch_[n] || placed_[n]) continue;
      for (ValueId v : graph_.nodes[n].outputs) {
        if (v != kNone && graph_.values[v].consumers.empty()) unused.emplace_back(graph_.values[v].name, v);
      }
    }
    std::sort(unused.begin(), unused.end());
    for (const auto& [name, v] : unused) {
      batch.clear();
      NodeId p = graph_.values[v].producer;
      if (!placed_[p]) CollectBranch(p, batch);
      AppendBranchBatch(batch);
    }
    batch.clear();
    for (NodeId n = 0; n < static_cast<NodeId>(num_nodes); ++n) {
      if (branch_[n] && !placed_[n]) CollectBranch(n, batch);
    }
    AppendBranchBatch(batch);
  }

  // Step 5 for the other boundaries: FIFO Kahn over the unplaced nodes.
  void EmitBackwardKahn() {
    const size_t num_nodes = graph_.nodes.size();
    std::vector<char> rest(num_nodes, 0);
    for (size_t n = 0; n < num_nodes; ++n) rest[n] = !placed_[n];
    std::vector<int32_t> in_degree(num_nodes, 0);
    std::deque<NodeId> ready;
    for (NodeId n = 0; n < static_cast<NodeId>(num_nodes); ++n) {
      if (!rest[n]) continue;
      for (ValueId v : graph_.nodes[n].inputs) {
        if (v != kNone && graph_.values[v].producer != kNone && rest[graph_.values[v].producer]) ++in_degree[n];
      }
      if (in_degree[n] == 0) ready.push_back(n);
    }
    auto is_rest = [&](NodeId c) { return rest[c] != 0; };
    std::vector<NodeId> released;
    while (!ready.empty()) {
      NodeId n = ready.front();
      ready.pop_front();
      Append(n);
      ReleaseConsumers(graph_, n, in_degree, is_rest, released);
      ready.insert(ready.end(), released.begin(), released.end());
    }
  }

  std::vector<NodeId>& order() { return order_; }
  bool placed(NodeId n) const { return placed_[n] != 0; }

 private:
  void Emit(NodeId n) {
    if (placed_[n]) return;
    Append(n);
    for (NodeId c : shape_size_children_[n]) Emit(c);
  }

  // Topological rank of the branch nodes (FIFO Kahn, node-id order) for ordering batches.
  void RankBranchNodes() {
    const size_t num_nodes = graph_.nodes.size();
    rank_.assign(num_nodes, -1);
    std::vector<int32_t> in_degree(num_nodes, 0);
    std::deque<NodeId> ready;
    for (NodeId n = 0; n < static_cast<NodeId>(num_nodes); ++n) {
      if (!branch_[n]) continue;
      for (ValueId v : graph_.nodes[n].inputs) {
        if (v != kNone && graph_.values[v].producer != kNone && branch_[graph_.values[v].producer]) ++in_degree[n];
      }
      if (in_degree[n] == 0) ready.push_back(n);
    }
    auto is_branch = [&](NodeId c) { return branch_[c] != 0; };
    std::vector<NodeId> released;
    int32_t next = 0;
    while (!ready.empty()) {
      NodeId n = ready.front();
      ready.pop_front();
      rank_[n] = next++;
      ReleaseConsumers(graph_, n, in_degree, is_branch, released);
      ready.insert(ready.end(), released.begin(), released.end());
    }
  }

  // `start` and its unplaced branch ancestors, marked placed (appended later by the caller).
  void CollectBranch(NodeId start, std::vector<NodeId>& batch) {
    std::vector<NodeId> stack = {start};
    placed_[start] = 1;
    while (!stack.empty()) {
      NodeId n = stack.back();
      stack.pop_back();
      batch.push_back(n);
      for (ValueId v : graph_.nodes[n].inputs) {
        if (v == kNone) continue;
        NodeId p = graph_.values[v].producer;
        if (p != kNone && branch_[p] && !placed_[p]) {
          placed_[p] = 1;
          stack.push_back(p);
        }
      }
    }
  }

  void AppendBranchBatch(std::vector<NodeId>& batch) {
    std::sort(batch.begin(), batch.end(), [&](NodeId a, NodeId b) { return rank_[a] < rank_[b]; });
    order_.insert(order_.end(), batch.begin(), batch.end());
  }

  const Graph& graph_;
  const std::vector<int32_t>& max_distance_;
  std::vector<char> placed_;
  std::vector<NodeId> order_;
  std::vector<std::vector<NodeId>> shape_size_children_;
  std::vector<char> relocatable_;
  std::vector<char> branch_;
  std::vector<int32_t> rank_;
};

}  // namespace

std::vector<InEdge> InputEdges(const Graph& graph, NodeId node) {
  std::vector<InEdge> edges;
  const Node& n = graph.nodes[node];
  for (int32_t d = 0; d < static_cast<int32_t>(n.inputs.size()); ++d) {
    ValueId v = n.inputs[d];
    if (v == kNone) continue;
    const Value& value = graph.values[v];
    if (value.producer == kNone) continue;
    edges.push_back({value.producer, value.producer_output, d});
  }
  std::sort(edges.begin(), edges.end(), [](const InEdge& a, const InEdge& b) {
    return std::tie(a.producer, a.src, a.dst) < std::tie(b.producer, b.src, b.dst);
  });
  return edges;
}

std::vector<int32_t> MaxDistances(const Graph& graph, const std::vector<NodeId>& topo) {
  std::vector<int32_t> distance(graph.nodes.size(), 0);
  for (NodeId n : topo) {
    for (ValueId v : graph.nodes[n].inputs) {
      if (v == kNone) continue;
      NodeId p = graph.values[v].producer;
      if (p != kNone) distance[n] = std::max(distance[n], distance[p] + 1);
    }
  }
  return distance;
}

ExecutionOrder MakeExecutionOrder(size_t num_nodes, std::vector<NodeId> order, int32_t last_forward) {
  ExecutionOrder result;
  result.position.assign(num_nodes, -1);
  for (size_t i = 0; i < order.size(); ++i) result.position[order[i]] = static_cast<int32_t>(i);
  result.order = std::move(order);
  result.last_forward = last_forward;
  return result;
}

Expected<ExecutionOrder> MemoryEfficientOrder(const Graph& graph, const Boundary& boundary) {
  MEMOPT_ASSIGN_OR_RETURN(std::vector<NodeId> topo, TopologicalOrder(graph));
  std::vector<int32_t> max_distance = MaxDistances(graph, topo);
  const size_t num_nodes = graph.nodes.size();
  OrderBuilder builder(graph, max_distance);

  const NodeId root = boundary.node;
  const bool yield_style =
      root != kNone && (boundary.kind == Boundary::Kind::kYieldOp ||
                        (boundary.kind == Boundary::Kind::kOverride && graph.nodes[root].op_type == "YieldOp"));
  int32_t last_forward = -1;
  if (yield_style) {
    std::vector<NodeId> seeds;
    for (const InEdge& e : InputEdges(graph, root)) seeds.push_back(e.producer);
    builder.EmitForward(seeds);
    if (!builder.placed(root)) builder.Append(root);
    last_forward = static_cast<int32_t>(builder.order().size()) - 1;
    builder.EmitBackwardLazy(root);
  } else if (boundary.kind == Boundary::Kind::kNone) {
    std::vector<NodeId> sinks = Sinks(graph, nullptr);
    std::reverse(sinks.begin(), sinks.end());  // explored in node-id order
    builder.EmitForward(sinks);
    last_forward = static_cast<int32_t>(builder.order().size()) - 1;
  } else {
    std::vector<NodeId> seeds;
    if (root != kNone) seeds.push_back(root);  // pushed first: explored last
    if (boundary.kind == Boundary::Kind::kLoss) {
      std::vector<char> forward = LossRuleBackwardMask(graph);
      for (char& c : forward) c = !c;
      std::vector<NodeId> sinks = Sinks(graph, &forward);
      for (auto it = sinks.rbegin(); it != sinks.rend(); ++it) {
        if (*it != root) seeds.push_back(*it);
      }
    }
    builder.EmitForward(seeds);
    last_forward = static_cast<int32_t>(builder.order().size()) - 1;
    builder.EmitBackwardKahn();
  }
  if (builder.order().size() != num_nodes) {
    return InternalError(fmt::format("execution order covers {} of {} nodes", builder.order().size(), num_nodes));
  }
  return MakeExecutionOrder(num_nodes, std::move(builder.order()), last_forward);
}

}  // namespace memopt
