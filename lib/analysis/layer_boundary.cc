#include "analysis/layer_boundary.h"

#include <deque>
#include <string>

namespace memopt {
namespace {

bool IsAttentionOp(const Node& node) {
  if (node.op_type == "Softmax" || node.op_type == "BiasSoftmax") return true;
  if (node.op_type == "PythonOp") {
    std::string func = node.GetString("func_name", "");
    return func == "flash_attn.flash_attn_interface.FlashAttnVarlenFunc" ||
           func == "flash_attn.flash_attn_interface.FlashAttnFunc";
  }
  return false;
}

}  // namespace

bool IsLayerNormType(const Node& node) {
  return node.op_type == "LayerNormalization" || node.op_type == "SkipLayerNormalization" ||
         node.op_type == "SimplifiedLayerNormalization" || node.op_type == "SkipSimplifiedLayerNormalization";
}

std::vector<NodeId> FindLayerBoundaryLayerNormNodes(const Graph& graph, const ExecutionOrder& order,
                                                    const Boundary& boundary) {
  std::vector<NodeId> result;
  if (boundary.kind == Boundary::Kind::kNone) return result;
  // "Before the YieldOp": positions below the YieldOp's; without one, the forward positions.
  int32_t yield_pos = order.last_forward + 1;
  if (boundary.node != kNone && graph.nodes[boundary.node].op_type == "YieldOp") {
    yield_pos = order.position[boundary.node];
  }
  std::vector<int32_t> stamp(graph.nodes.size(), -1);
  std::deque<NodeId> queue;
  for (NodeId n : order.order) {
    const Node& ln = graph.nodes[n];
    if (!IsLayerNormType(ln) || ln.inputs.empty() || ln.inputs[0] == kNone) continue;
    const Value& x = graph.values[ln.inputs[0]];
    NodeId add = kNone;
    NodeId norm = kNone;
    int distinct = 0;
    NodeId previous = kNone;
    for (const auto& [consumer, slot] : x.consumers) {  // node-id order
      if (consumer != previous) ++distinct;
      previous = consumer;
      if (graph.nodes[consumer].op_type == "Add") add = consumer;
      if (IsLayerNormType(graph.nodes[consumer])) norm = consumer;
    }
    if (distinct < 2 || add == kNone || norm == kNone) continue;
    const int32_t add_pos = order.position[add];
    if (add_pos >= yield_pos || order.position[norm] >= yield_pos) continue;

    auto enqueue_consumers = [&](NodeId from) {
      for (ValueId v : graph.nodes[from].outputs) {
        if (v == kNone) continue;
        for (const auto& [c, slot] : graph.values[v].consumers) {
          const int32_t pos = order.position[c];
          if (stamp[c] == n || pos >= yield_pos || pos >= add_pos) continue;
          stamp[c] = n;
          queue.push_back(c);
        }
      }
    };
    queue.clear();
    enqueue_consumers(n);
    bool found = false;
    while (!queue.empty() && !found) {
      NodeId c = queue.front();
      queue.pop_front();
      if (IsAttentionOp(graph.nodes[c])) {
        found = true;
        break;
      }
      enqueue_consumers(c);
    }
    if (found) result.push_back(n);
  }
  return result;
}

}  // namespace memopt
