#include "exec/bind_inputs.h"

#include "exec/initializer_reader.h"
#include "exec/input_binding.h"

namespace memopt {

namespace {

std::string DescribeInfo(const TensorInfo& info) {
  std::string s = DataTypeName(info.dtype);
  if (info.shape.has_value()) s += ShapeToString(*info.shape);
  return s;
}

Status CheckInitializerFeed(const Value& value, const Tensor& feed) {
  const InitializerInfo& info = *value.initializer;
  if (feed.dtype() != info.dtype || feed.shape() != info.dims) {
    std::string want = DataTypeName(info.dtype) + "[";
    for (size_t i = 0; i < info.dims.size(); ++i) want += (i ? ", " : "") + std::to_string(info.dims[i]);
    return InvalidInput("initializer '" + value.name + "': fed " + feed.Describe() + ", the model has " + want + "]");
  }
  return Status::Ok();
}

}  // namespace

Status BindInputs(const Model& model, const std::vector<NodeId>& order, const std::map<std::string, Tensor>& feeds,
                  MemoryTracker& tracker, const InputSink& sink) {
  const Graph& graph = model.graph;
  for (const auto& [name, tensor] : feeds) {
    const ValueId v = graph.FindValue(name);
    if (v == kNone || (!graph.value(v).is_graph_input && !graph.value(v).initializer.has_value())) {
      return InvalidInput("feed '" + name + "' is not a graph input or initializer of the model");
    }
  }
  // Values some scheduled node or a graph output reads (others are counted but not loaded).
  std::vector<char> needed(graph.values.size(), 0);
  for (NodeId n : order) {
    for (ValueId v : graph.node(n).inputs) {
      if (v != kNone) needed[v] = 1;
    }
  }
  for (ValueId v : graph.outputs) needed[v] = 1;

  std::vector<char> bound_value(graph.values.size(), 0);
  BoundDims bound;
  for (ValueId v : graph.inputs) {
    const Value& value = graph.value(v);
    auto it = feeds.find(value.name);
    if (it == feeds.end()) {
      if (value.initializer.has_value()) continue;  // default value from the initializer
      return InvalidInput("input '" + value.name + "' is not fed (" + DescribeInfo(value.info) + ")");
    }
    MEMOPT_RETURN_IF_ERROR(CheckFeed(graph, v, it->second, bound));
    MEMOPT_RETURN_IF_ERROR(sink.bind(v, it->second));
    tracker.AddAlwaysLive(v, it->second.bytes());
    bound_value[v] = 1;
  }
  InitializerReader reader(model);
  for (size_t i = 0; i < graph.values.size(); ++i) {
    const auto v = static_cast<ValueId>(i);
    const Value& value = graph.value(v);
    if (!value.initializer.has_value() || bound_value[v]) continue;
    auto it = feeds.find(value.name);
    if (it != feeds.end()) {
      MEMOPT_RETURN_IF_ERROR(CheckInitializerFeed(value, it->second));
      MEMOPT_RETURN_IF_ERROR(sink.bind(v, it->second));
      tracker.AddAlwaysLive(v, it->second.bytes());
    } else if (needed[v]) {
      MEMOPT_ASSIGN_OR_RETURN(Tensor host, reader.Read(v));
      MEMOPT_RETURN_IF_ERROR(sink.bind(v, host));
      tracker.AddAlwaysLive(v, host.bytes());
    } else {
      const int64_t bytes = InitializerBytes(*value.initializer);
      if (sink.unread_initializer) MEMOPT_RETURN_IF_ERROR(sink.unread_initializer(v, bytes));
      tracker.AddAlwaysLive(v, bytes);
    }
  }
  return Status::Ok();
}

}  // namespace memopt
