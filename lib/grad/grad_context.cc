// GraphEmitter and the NodeGrad helpers shared by every gradient rule.
#include "grad/grad_context.h"

#include <cstring>

#include "util/half.h"

namespace memopt::grad {

onnx::AttributeProto AttrInt(const std::string& name, int64_t v) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::INT);
  a.set_i(v);
  return a;
}

onnx::AttributeProto AttrFloat(const std::string& name, float v) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::FLOAT);
  a.set_f(v);
  return a;
}

onnx::AttributeProto AttrInts(const std::string& name, const std::vector<int64_t>& v) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a.add_ints(x);
  return a;
}

onnx::AttributeProto AttrString(const std::string& name, const std::string& v) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::STRING);
  a.set_s(v);
  return a;
}

onnx::AttributeProto AttrTensor(const std::string& name, const onnx::TensorProto& t) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::TENSOR);
  *a.mutable_t() = t;
  return a;
}

namespace {

template <typename T>
void Append(std::string& raw, T v) {
  char bytes[sizeof(T)];
  std::memcpy(bytes, &v, sizeof(T));
  raw.append(bytes, sizeof(T));
}

}  // namespace

onnx::TensorProto MakeTensor(DataType dtype, const std::vector<int64_t>& dims, const std::vector<double>& values) {
  onnx::TensorProto t;
  t.set_data_type(static_cast<int32_t>(dtype));
  for (int64_t d : dims) t.add_dims(d);
  std::string raw;
  for (double v : values) {
    switch (dtype) {
      case DataType::kFloat:
        Append(raw, static_cast<float>(v));
        break;
      case DataType::kDouble:
        Append(raw, v);
        break;
      case DataType::kFloat16:
        Append(raw, FloatToFloat16(static_cast<float>(v)));
        break;
      case DataType::kBfloat16:
        Append(raw, FloatToBfloat16(static_cast<float>(v)));
        break;
      case DataType::kInt32:
        Append(raw, static_cast<int32_t>(v));
        break;
      case DataType::kBool:
        Append(raw, static_cast<uint8_t>(v != 0));
        break;
      default:
        Append(raw, static_cast<int64_t>(v));
        break;
    }
  }
  t.set_raw_data(raw);
  return t;
}

bool IsDifferentiableType(DataType t) {
  return t == DataType::kFloat || t == DataType::kDouble || t == DataType::kFloat16 || t == DataType::kBfloat16;
}

std::optional<std::vector<int64_t>> LiteralShape(const std::optional<Shape>& shape) {
  if (!shape) return std::nullopt;
  std::vector<int64_t> dims;
  for (const SymExpr& d : *shape) {
    auto v = d.AsInt();
    if (!v) return std::nullopt;
    dims.push_back(*v);
  }
  return dims;
}

// ------------------------------------------------------------------------------------------------
// GraphEmitter

GraphEmitter::GraphEmitter(Graph& graph) : graph_(graph), original_nodes_(static_cast<NodeId>(graph.nodes.size())) {
  for (const Value& v : graph_.values) names_.insert(v.name);
}

bool GraphEmitter::Reserve(const std::string& name) { return names_.insert(name).second; }

std::string GraphEmitter::UniqueName(const std::string& base) {
  if (Reserve(base)) return base;
  for (int k = 1;; ++k) {
    std::string candidate = base + "_" + std::to_string(k);
    if (Reserve(candidate)) return candidate;
  }
}

NodeId GraphEmitter::Add(const std::string& name, const std::string& op, const std::string& domain,
                         const std::vector<std::string>& inputs, const std::vector<std::string>& outputs,
                         const std::vector<onnx::AttributeProto>& attrs, std::optional<NodeId> after_forward) {
  Node node;
  node.id = static_cast<NodeId>(graph_.nodes.size());
  node.name = name;
  node.op_type = op;
  node.domain = domain;
  node.proto.set_name(name);
  node.proto.set_op_type(op);
  if (!domain.empty()) node.proto.set_domain(domain);
  for (const std::string& in : inputs) {
    node.inputs.push_back(in.empty() ? kNone : graph_.GetOrAddValue(in));
  }
  for (const std::string& out : outputs) {
    if (!out.empty()) names_.insert(out);
    node.outputs.push_back(out.empty() ? kNone : graph_.GetOrAddValue(out));
  }
  for (const auto& a : attrs) *node.proto.add_attribute() = a;
  node.since_version = ResolveSinceVersion(graph_, domain, op);
  const NodeId id = node.id;
  for (size_t o = 0; o < node.outputs.size(); ++o) {
    if (node.outputs[o] == kNone) continue;
    graph_.value(node.outputs[o]).producer = id;
    graph_.value(node.outputs[o]).producer_output = static_cast<int32_t>(o);
  }
  graph_.nodes.push_back(std::move(node));
  if (after_forward.has_value()) {
    after_[*after_forward].push_back(id);
    forward_added_.insert(id);
  } else {
    backward_.push_back(id);
  }
  return id;
}

void GraphEmitter::SetInfo(const std::string& name, DataType dtype, std::optional<Shape> shape) {
  Value& v = graph_.value(graph_.GetOrAddValue(name));
  v.info.dtype = dtype;
  v.info.shape = std::move(shape);
}

std::vector<NodeId> GraphEmitter::FinalOrder(const std::vector<NodeId>& forward_order, NodeId yield) const {
  std::vector<NodeId> order;
  order.reserve(graph_.nodes.size());
  auto append_after = [&](NodeId anchor) {
    auto it = after_.find(anchor);
    if (it == after_.end()) return;
    for (NodeId n : it->second) order.push_back(n);
  };
  append_after(kNone);
  for (NodeId n : forward_order) {
    order.push_back(n);
    append_after(n);
  }
  if (yield != kNone) order.push_back(yield);
  for (NodeId n : backward_) {
    if (n != yield) order.push_back(n);
  }
  return order;
}

// ------------------------------------------------------------------------------------------------
// NodeGrad

NodeGrad::NodeGrad(GradShared& shared, const Node& node, std::string prefix, std::vector<std::string> go,
                   std::vector<std::string> gi_names)
    : shared_(shared), node_(node), prefix_(std::move(prefix)), go_(std::move(go)), gi_(std::move(gi_names)) {}

std::string NodeGrad::I(int i) const {
  if (i < 0 || i >= num_inputs() || node_.inputs[i] == kNone) return "";
  return shared_.emitter->graph().value(node_.inputs[i]).name;
}

std::string NodeGrad::O(int j) const {
  if (j < 0 || j >= num_outputs() || node_.outputs[j] == kNone) return "";
  return shared_.emitter->graph().value(node_.outputs[j]).name;
}

const std::string& NodeGrad::GO(int j) const {
  static const std::string kEmpty;
  if (j < 0 || j >= static_cast<int>(go_.size())) return kEmpty;
  return go_[j];
}

bool NodeGrad::NeedGI(int i) const { return i >= 0 && i < static_cast<int>(gi_.size()) && !gi_[i].empty(); }

const std::string& NodeGrad::GI(int i) const {
  static const std::string kEmpty;
  if (!NeedGI(i)) return kEmpty;
  return gi_[i];
}

DataType NodeGrad::Dtype(const std::string& name) const {
  const Graph& g = shared_.emitter->graph();
  const ValueId v = g.FindValue(name);
  return v == kNone ? DataType::kUndefined : g.value(v).info.dtype;
}

std::optional<Shape> NodeGrad::ShapeOf(const std::string& name) const {
  const Graph& g = shared_.emitter->graph();
  const ValueId v = g.FindValue(name);
  if (v == kNone) return std::nullopt;
  return g.value(v).info.shape;
}

std::optional<int64_t> NodeGrad::Rank(const std::string& name) const {
  auto s = ShapeOf(name);
  if (!s) return std::nullopt;
  return static_cast<int64_t>(s->size());
}

std::optional<std::vector<int64_t>> NodeGrad::IntValues(const std::string& name) const {
  const Graph& g = shared_.emitter->graph();
  const ValueId v = g.FindValue(name);
  if (v == kNone || !g.value(v).known_values) return std::nullopt;
  std::vector<int64_t> out;
  for (const SymExpr& e : *g.value(v).known_values) {
    auto x = e.AsInt();
    if (!x) return std::nullopt;
    out.push_back(*x);
  }
  return out;
}

std::string NodeGrad::Tmp(const std::string& suffix) { return shared_.emitter->UniqueName(prefix_ + suffix); }

void NodeGrad::Emit(const std::string& op, const std::vector<std::string>& inputs,
                    const std::vector<std::string>& outputs, const std::vector<onnx::AttributeProto>& attrs,
                    const std::string& domain) {
  const std::string name = prefix_ + op + "_" + std::to_string(emitted_++);
  shared_.emitter->Add(name, op, domain, inputs, outputs, attrs);
  shared_.emitted_for.emplace(name, OpKey::Of(node_));
}

std::string NodeGrad::Op(const std::string& op, const std::vector<std::string>& inputs,
                         const std::vector<onnx::AttributeProto>& attrs, const std::string& domain,
                         const std::string& info_from) {
  const std::string out = Tmp(op + "_" + std::to_string(emitted_) + "_out");
  Emit(op, inputs, {out}, attrs, domain);
  if (!info_from.empty()) shared_.emitter->SetInfo(out, Dtype(info_from), ShapeOf(info_from));
  return out;
}

std::string NodeGrad::Const(const std::string& suffix, const onnx::TensorProto& value) {
  const std::string out = Tmp(suffix);
  Emit("Constant", {}, {out}, {AttrTensor("value", value)});
  Shape shape;
  for (int64_t d : value.dims()) shape.emplace_back(d);
  shared_.emitter->SetInfo(out, static_cast<DataType>(value.data_type()), shape);
  return out;
}

std::string NodeGrad::ScalarConst(const std::string& suffix, DataType dtype, double v) {
  return Const(suffix, MakeTensor(dtype, {}, {v}));
}

std::string NodeGrad::Int64Const(const std::string& suffix, const std::vector<int64_t>& values) {
  onnx::TensorProto t = MakeTensor(DataType::kInt64, {static_cast<int64_t>(values.size())}, {});
  std::string raw;
  for (int64_t x : values) Append(raw, x);
  t.set_raw_data(raw);
  const std::string out = Const(suffix, t);
  std::vector<SymExpr> known(values.begin(), values.end());
  Graph& g = shared_.emitter->graph();
  g.value(g.FindValue(out)).known_values = known;
  return out;
}

std::string NodeGrad::SharedConst(const std::string& kind, DataType dtype, double v) {
  const std::string key = kind + "_" + std::to_string(static_cast<int>(dtype));
  auto it = shared_.shared_constants.find(key);
  if (it != shared_.shared_constants.end()) return it->second;
  const std::string name =
      shared_.emitter->UniqueName(kind + "Constant_Type" + std::to_string(static_cast<int>(dtype)));
  shared_.emitter->Add(name, "Constant", "", {}, {name}, {AttrTensor("value", MakeTensor(dtype, {}, {v}))});
  shared_.emitter->SetInfo(name, dtype, Shape{});
  shared_.shared_constants[key] = name;
  return name;
}

std::string NodeGrad::ShapeOfTensor(const std::string& tensor) {
  auto it = shared_.shape_values.find(tensor);
  if (it != shared_.shape_values.end()) return it->second;
  const std::optional<Shape> shape = ShapeOf(tensor);
  std::string out;
  if (auto dims = LiteralShape(shape)) {
    out = Int64Const(tensor + "_shape", *dims);
  } else {
    Graph& g = shared_.emitter->graph();
    const ValueId v = g.FindValue(tensor);
    const NodeId producer = v == kNone ? kNone : g.value(v).producer;
    out = Tmp(tensor + "_shape");
    const std::string name = prefix_ + "Shape_" + std::to_string(emitted_++);
    if (producer != kNone && producer < shared_.emitter->original_nodes()) {
      shared_.emitter->Add(name, "Shape", "", {tensor}, {out}, {}, producer);
    } else if (producer == kNone) {
      shared_.emitter->Add(name, "Shape", "", {tensor}, {out}, {}, kNone);
    } else {
      shared_.emitter->Add(name, "Shape", "", {tensor}, {out});  // a backward tensor
    }
    if (shape) {
      shared_.emitter->SetInfo(out, DataType::kInt64, Shape{SymExpr(static_cast<int64_t>(shape->size()))});
      g.value(g.FindValue(out)).known_values = *shape;
    } else {
      shared_.emitter->SetInfo(out, DataType::kInt64, std::nullopt);
    }
  }
  shared_.shape_values[tensor] = out;
  return out;
}

void NodeGrad::ReduceSum(const std::string& x, const std::vector<int64_t>& axes, bool keepdims,
                         const std::string& out) {
  if (opset() < 13) {
    Emit("ReduceSum", {x}, {out}, {AttrInts("axes", axes), AttrInt("keepdims", keepdims ? 1 : 0)});
  } else {
    const std::string a = Int64Const("ReduceAxes_for_" + out, axes);
    Emit("ReduceSum", {x, a}, {out}, {AttrInt("keepdims", keepdims ? 1 : 0)});
  }
}

void NodeGrad::Unsqueeze(const std::string& x, const std::vector<int64_t>& axes, const std::string& out) {
  if (opset() < 13) {
    Emit("Unsqueeze", {x}, {out}, {AttrInts("axes", axes)});
  } else {
    Emit("Unsqueeze", {x, Int64Const("Unsqueeze_axes_" + std::to_string(emitted_), axes)}, {out});
  }
}

void NodeGrad::Squeeze(const std::string& x, const std::vector<int64_t>& axes, const std::string& out) {
  if (opset() < 13) {
    Emit("Squeeze", {x}, {out}, {AttrInts("axes", axes)});
  } else {
    Emit("Squeeze", {x, Int64Const("Squeeze_axes_" + std::to_string(emitted_), axes)}, {out});
  }
}

namespace {

/// Static broadcast-reduction plan, or nullopt when the shapes do not decide every axis.
struct ReducePlan {
  std::vector<int64_t> leading;  ///< axes of grad that the target lacks
  std::vector<int64_t> inner;    ///< axes where the target has a literal 1 and grad does not
};

std::optional<ReducePlan> PlanReduce(const Shape& g, const Shape& t) {
  if (t.size() > g.size()) return std::nullopt;
  ReducePlan plan;
  const size_t lead = g.size() - t.size();
  for (size_t i = 0; i < lead; ++i) plan.leading.push_back(static_cast<int64_t>(i));
  for (size_t i = 0; i < t.size(); ++i) {
    const SymExpr& gd = g[lead + i];
    const SymExpr& td = t[i];
    if (gd == td) continue;
    const auto gl = gd.AsInt(), tl = td.AsInt();
    if (tl && *tl == 1) {
      plan.inner.push_back(static_cast<int64_t>(lead + i));
    } else if (gl && *gl == 1) {
      continue;  // the target dim must be 1 too for the forward broadcast to be valid
    } else {
      return std::nullopt;  // e.g. two different symbols: the runtime decides
    }
  }
  return plan;
}

}  // namespace

bool NodeGrad::MayNeedReduce(const std::optional<Shape>& grad_shape, const std::optional<Shape>& target_shape) {
  if (!grad_shape || !target_shape) return true;
  auto plan = PlanReduce(*grad_shape, *target_shape);
  return !plan || !plan->leading.empty() || !plan->inner.empty();
}

void NodeGrad::ReduceTo(const std::string& grad, const std::optional<Shape>& grad_shape, const std::string& target,
                        const std::optional<Shape>& target_shape, const std::string& out) {
  const DataType dtype = Dtype(grad);
  std::optional<ReducePlan> plan;
  if (grad_shape && target_shape) plan = PlanReduce(*grad_shape, *target_shape);
  if (plan) {
    if (plan->leading.empty() && plan->inner.empty()) {
      Emit("Identity", {grad}, {out});
    } else if (plan->inner.empty()) {
      ReduceSum(grad, plan->leading, false, out);
    } else if (plan->leading.empty()) {
      ReduceSum(grad, plan->inner, true, out);
    } else {
      std::vector<int64_t> all = plan->leading;
      all.insert(all.end(), plan->inner.begin(), plan->inner.end());
      const std::string reduced = Tmp("ReduceSum_" + grad + "_for_" + target);
      ReduceSum(grad, all, true, reduced);
      Squeeze(reduced, plan->leading, out);
    }
    shared_.emitter->SetInfo(out, dtype, target_shape);
    return;
  }
  // Dynamic: the runtime shapes decide.
  const std::string target_shape_value = ShapeOfTensor(target);
  const std::string grad_shape_value = Op("Shape", {grad});
  const std::string axes = Tmp("ReduceAxes_" + target);
  Emit("BroadcastGradientArgs", {target_shape_value, grad_shape_value}, {axes, ""}, {}, kMsDomain);
  const std::string reduced = Tmp("ReduceSum_" + grad + "_for_" + target);
  const std::vector<onnx::AttributeProto> attrs = {AttrInt("keepdims", 1), AttrInt("noop_with_empty_axes", 1)};
  if (opset() < 13) {
    Emit("ReduceSumTraining", {grad, axes}, {reduced}, attrs, kMsDomain);
  } else {
    Emit("ReduceSum", {grad, axes}, {reduced}, attrs);
  }
  Emit("Reshape", {reduced, target_shape_value}, {out});
  shared_.emitter->SetInfo(out, dtype, target_shape);
}

std::vector<onnx::AttributeProto> NodeGrad::CopyAttrs(const std::set<std::string>& except) const {
  std::vector<onnx::AttributeProto> out;
  for (const auto& a : node_.proto.attribute()) {
    if (except.count(a.name()) == 0) out.push_back(a);
  }
  return out;
}

std::string NodeGrad::GIOrTmp(int i, bool required, const std::string& suffix) {
  if (NeedGI(i)) return GI(i);
  return required ? Tmp(suffix) : std::string();
}

}  // namespace memopt::grad
