#include "analysis/stashed.h"

namespace memopt {

StashedCandidates FindStashedCandidates(const Graph& graph, const ExecutionOrder& order) {
  StashedCandidates result;
  result.outputs.assign(graph.nodes.size(), {});
  result.is_stashed_value.assign(graph.values.size(), 0);
  for (int32_t pos = 0; pos <= order.last_forward && pos < static_cast<int32_t>(order.order.size()); ++pos) {
    const NodeId n = order.order[pos];
    const Node& node = graph.nodes[n];
    for (int32_t k = 0; k < static_cast<int32_t>(node.outputs.size()); ++k) {
      const ValueId v = node.outputs[k];
      if (v == kNone || graph.values[v].name.empty()) continue;
      bool used_in_backward = false;
      for (const auto& [consumer, slot] : graph.values[v].consumers) {
        if (order.position[consumer] > order.last_forward) {
          used_in_backward = true;
          break;
        }
      }
      if (!used_in_backward) continue;
      result.outputs[n].push_back(k);
      result.is_stashed_value[v] = 1;
    }
    if (!result.outputs[n].empty()) result.nodes.push_back(n);
  }
  return result;
}

}  // namespace memopt
