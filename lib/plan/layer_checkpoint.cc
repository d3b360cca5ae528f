#include "plan/layer_checkpoint.h"

#include <algorithm>

#include "analysis/layer_boundary.h"
#include "analysis/stashed.h"

namespace memopt {

ScanResult LayerCheckpointScan(const Graph& graph, const ScanResult& scan) {
  ScanResult out = scan;
  out.plans.clear();
  out.groups.clear();
  out.rejected.clear();
  const ExecutionOrder& order = scan.order;
  std::vector<NodeId> boundaries = FindLayerBoundaryLayerNormNodes(graph, order, scan.boundary);
  if (boundaries.empty()) return out;
  // Layer i spans positions [start[i], start[i + 1]); the last one as long as the one before it
  // (or to the end of the forward pass when there is only one).
  std::vector<int32_t> start;
  for (NodeId b : boundaries) start.push_back(order.position[b]);
  std::sort(start.begin(), start.end());
  const int32_t forward_end = order.last_forward + 1;
  const int32_t last_len = start.size() >= 2 ? start.back() - start[start.size() - 2] : forward_end - start.back();
  start.push_back(std::min(forward_end, start.back() + last_len));

  const StashedCandidates stashed = FindStashedCandidates(graph, order);
  std::vector<RecomputePlan> plans;
  std::vector<char> seen(graph.nodes.size(), 0);
  std::vector<NodeId> stack, members;
  for (size_t layer = 0; layer + 1 < start.size(); ++layer) {
    const int32_t begin = start[layer], end = start[layer + 1];
    auto inside = [&](NodeId n) { return order.position[n] >= begin && order.position[n] < end; };
    for (NodeId entry : stashed.nodes) {
      if (!inside(entry)) continue;
      // The layer's output (read by forward nodes after the layer) is the next layer's input: kept.
      bool output_of_layer = false;
      for (ValueId v : graph.nodes[entry].outputs) {
        if (v == kNone) continue;
        for (const auto& [c, slot] : graph.values[v].consumers) {
          output_of_layer = output_of_layer || (order.IsForward(c) && order.position[c] >= end);
        }
      }
      if (output_of_layer) continue;
      // Ancestors inside the layer.
      members.clear();
      stack.assign(1, entry);
      seen[entry] = 1;
      while (!stack.empty()) {
        const NodeId n = stack.back();
        stack.pop_back();
        members.push_back(n);
        for (ValueId v : graph.nodes[n].inputs) {
          if (v == kNone) continue;
          const NodeId p = graph.values[v].producer;
          if (p == kNone || seen[p] || !inside(p)) continue;
          seen[p] = 1;
          stack.push_back(p);
        }
      }
      for (NodeId n : members) seen[n] = 0;
      std::sort(members.begin(), members.end(),
                [&](NodeId a, NodeId b) { return order.position[a] < order.position[b]; });
      RecomputePlan plan;
      plan.entry = entry;
      plan.subgraph = members;
      plan.cluster_id = "checkpoint(layer " + std::to_string(layer) + ")";
      for (int32_t i : stashed.outputs[entry]) {
        StashedOutput o;
        o.output_index = i;
        o.value = graph.nodes[entry].outputs[static_cast<size_t>(i)];
        o.bytes = graph.values[o.value].info.Bytes();
        plan.outputs.push_back(std::move(o));
      }
      plans.push_back(std::move(plan));
    }
  }
  // ScanResult::plans order: reverse execution order of the entries.
  std::sort(plans.begin(), plans.end(), [&](const RecomputePlan& a, const RecomputePlan& b) {
    return order.position[a.entry] > order.position[b.entry];
  });
  out.plans = std::move(plans);
  return out;
}

}  // namespace memopt
