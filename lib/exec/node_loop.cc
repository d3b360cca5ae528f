#include "exec/node_loop.h"

namespace memopt::node_loop_detail {

std::string DescribeOutputs(const Graph& graph, const Node& node) {
  std::string outputs;
  for (ValueId v : node.outputs) {
    if (v == kNone) continue;
    const Value& value = graph.value(v);
    outputs += (outputs.empty() ? "'" : ", '") + value.name + "' " + DataTypeName(value.info.dtype) +
               (value.info.shape ? ShapeToString(*value.info.shape) : std::string("[?]"));
  }
  return outputs;
}

Status InputNotAvailable(const Graph& graph, const ExecutionOrder& order, const Node& node, ValueId v) {
  const Value& value = graph.value(v);
  const std::string why = value.producer != kNone && order.position[value.producer] < 0
                              ? "its producer " + graph.node(value.producer).Describe() + " is not in the order"
                              : "it is not computed before this node in the order";
  return InvalidInput("node " + node.Describe() + ": input '" + value.name + "' is not available (" + why + ")");
}

}  // namespace memopt::node_loop_detail
