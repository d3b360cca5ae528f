#include "ir/topo_order.h"

#include <functional>
#include <queue>

namespace memopt {

Expected<std::vector<NodeId>> TopologicalOrder(const Graph& graph, const TopoOptions& options) {
  const size_t n = graph.nodes.size();
  std::vector<NodeId> producer(graph.values.size(), kNone);
  for (const Node& node : graph.nodes) {
    for (ValueId v : node.outputs) {
      if (v != kNone && producer[v] == kNone) producer[v] = node.id;
    }
  }
  // Per node, the producers it waits for (one entry per input edge).
  std::vector<std::vector<NodeId>> waits_for(n);
  for (const Node& node : graph.nodes) {
    auto add = [&](ValueId v) {
      if (v != kNone && producer[v] != kNone) waits_for[node.id].push_back(producer[v]);
    };
    for (ValueId v : node.inputs) add(v);
    if (options.extra_inputs != nullptr) {
      for (ValueId v : options.extra_inputs(graph, node)) add(v);
    }
  }
  std::vector<size_t> pending(n);
  std::vector<std::vector<NodeId>> users(n);
  for (size_t i = 0; i < n; ++i) {
    pending[i] = waits_for[i].size();
    for (NodeId p : waits_for[i]) users[p].push_back(static_cast<NodeId>(i));
  }
  std::priority_queue<NodeId, std::vector<NodeId>, std::greater<>> ready;
  for (size_t i = 0; i < n; ++i) {
    if (pending[i] == 0) ready.push(static_cast<NodeId>(i));
  }
  std::vector<NodeId> order;
  order.reserve(n);
  std::vector<char> done(n, 0);
  while (!ready.empty()) {
    const NodeId id = ready.top();
    ready.pop();
    order.push_back(id);
    done[id] = 1;
    for (NodeId u : users[id]) {
      if (--pending[u] == 0) ready.push(u);
    }
  }
  if (order.size() == n) return order;

  // Walk back through unfinished producers from the first unfinished node until a node repeats:
  // that node lies on a cycle.
  NodeId at = kNone;
  for (size_t i = 0; i < n && at == kNone; ++i) {
    if (!done[i]) at = static_cast<NodeId>(i);
  }
  std::vector<char> seen(n, 0);
  while (!seen[at]) {
    seen[at] = 1;
    NodeId next = kNone;
    for (NodeId p : waits_for[at]) {
      if (!done[p]) {
        next = p;
        break;
      }
    }
    if (next == kNone) break;  // cannot happen: an unfinished node waits for an unfinished one
    at = next;
  }
  return InvalidInput("graph has a cycle through node " + graph.nodes[at].Describe() +
                      ": its inputs depend on its own outputs; " + std::string(options.cycle_hint));
}

}  // namespace memopt
