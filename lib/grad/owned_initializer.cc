#include "grad/owned_initializer.h"

#include "exec/tensor_io.h"

namespace memopt::grad {

ValueId AddOwnedInitializer(Graph& g, const std::string& name, const Tensor& t, uint64_t order) {
  std::string bytes;
  TensorToProto(t, name).SerializeToString(&bytes);
  InitializerInfo info;
  info.dims = t.shape();
  info.dtype = t.dtype();
  info.file_offset = order;
  info.owned_proto = std::make_shared<const std::string>(std::move(bytes));
  const ValueId v = g.GetOrAddValue(name);
  Value& value = g.value(v);
  value.info.dtype = info.dtype;
  value.info.is_tensor = true;
  Shape shape;
  for (int64_t d : info.dims) shape.emplace_back(d);
  value.info.shape = std::move(shape);
  value.initializer = std::move(info);
  return v;
}

Node MakeOnnxNode(const Graph& g, const std::string& name, const std::string& op, std::vector<ValueId> inputs,
                  std::vector<ValueId> outputs) {
  Node node;
  node.name = name;
  node.op_type = op;
  node.inputs = std::move(inputs);
  node.outputs = std::move(outputs);
  node.since_version = ResolveSinceVersion(g, "", op);
  node.proto.set_op_type(op);
  node.proto.set_name(name);
  return node;
}

std::string FreshName(const Graph& g, const std::string& base) {
  std::string name = base;
  for (int k = 1; g.FindValue(name) != kNone; ++k) name = base + "_" + std::to_string(k);
  return name;
}

ValueId Int64Constant(Graph& g, const std::string& base, const std::vector<int64_t>& values, std::vector<Node>& nodes) {
  const ValueId v = g.GetOrAddValue(FreshName(g, base));
  Node c = MakeOnnxNode(g, g.value(v).name, "Constant", {}, {v});
  auto* attr = c.proto.add_attribute();
  attr->set_name("value");
  attr->set_type(onnx::AttributeProto::TENSOR);
  auto* t = attr->mutable_t();
  t->set_data_type(onnx::TensorProto::INT64);
  t->add_dims(static_cast<int64_t>(values.size()));
  for (int64_t x : values) t->add_int64_data(x);
  nodes.push_back(std::move(c));
  return v;
}

}  // namespace memopt::grad
