// Ops that create tensors from attributes or from shape data: Shape, Size, Constant,
// ConstantOfShape, Range, EyeLike, Random*, Bernoulli, Multinomial. (Their element values, where
// they matter for shape arithmetic, are set by ops/layout/shape_values.cc.)
#include <algorithm>

#include "ir/op_registry.h"
#include "shape/rule_registry.h"

namespace memopt::shape {

namespace {

/// Shape-15 start/end: clamped into [0, rank].
std::pair<int64_t, int64_t> ShapeSliceBounds(const Node& node, int64_t rank) {
  auto clamp = [rank](int64_t v) {
    if (v < 0) v += rank;
    return std::clamp<int64_t>(v, 0, rank);
  };
  const int64_t start = clamp(node.GetInt("start", 0));
  const int64_t end = node.HasAttr("end") ? clamp(node.GetInt("end", rank)) : rank;
  return {start, std::max(start, end)};
}

Status ShapeRule(InferContext& ctx) {
  auto rank = ctx.InputRank(0);
  if (!rank.has_value()) {
    ctx.SetOutput(0, DataType::kInt64, ctx.FreshShape(0, 1, "Shape of an input of unknown rank"));
    return Status::Ok();
  }
  auto [start, end] = ShapeSliceBounds(ctx.node(), *rank);
  ctx.SetOutput(0, DataType::kInt64, Shape{SymExpr(end - start)});
  return Status::Ok();
}

Status SizeRule(InferContext& ctx) {
  ctx.SetOutput(0, DataType::kInt64, Shape{});
  return Status::Ok();
}

const onnx::AttributeProto* FindAttribute(const Node& node, const std::string& name) {
  for (const auto& attr : node.proto.attribute()) {
    if (attr.name() == name) return &attr;
  }
  return nullptr;
}

Status ConstantRule(InferContext& ctx) {
  const Node& node = ctx.node();
  if (const onnx::TensorProto* t = node.GetTensor("value")) {
    const int32_t raw = t->data_type();
    ctx.SetOutput(0, IsKnownDataType(raw) ? static_cast<DataType>(raw) : DataType::kUndefined, TensorProtoShape(*t));
  } else if (node.HasAttr("value_int")) {
    ctx.SetOutput(0, DataType::kInt64, Shape{});
  } else if (node.HasAttr("value_float")) {
    ctx.SetOutput(0, DataType::kFloat, Shape{});
  } else if (node.HasAttr("value_string")) {
    ctx.SetOutput(0, DataType::kString, Shape{});
  } else if (const auto* ints = FindAttribute(node, "value_ints")) {
    ctx.SetOutput(0, DataType::kInt64, Shape{SymExpr(static_cast<int64_t>(ints->ints_size()))});
  } else if (const auto* floats = FindAttribute(node, "value_floats")) {
    ctx.SetOutput(0, DataType::kFloat, Shape{SymExpr(static_cast<int64_t>(floats->floats_size()))});
  } else if (const auto* strings = FindAttribute(node, "value_strings")) {
    ctx.SetOutput(0, DataType::kString, Shape{SymExpr(static_cast<int64_t>(strings->strings_size()))});
  } else if (const auto* sparse = FindAttribute(node, "sparse_value")) {
    Shape s;
    for (int64_t d : sparse->sparse_tensor().dims()) s.emplace_back(d);
    const int32_t raw = sparse->sparse_tensor().values().data_type();
    ctx.SetOutput(0, IsKnownDataType(raw) ? static_cast<DataType>(raw) : DataType::kUndefined, std::move(s));
  } else {
    ctx.Diagnose(ctx.OutputName(0), "Constant has no value attribute");
  }
  return Status::Ok();
}

Status ConstantOfShapeRule(InferContext& ctx) {
  DataType dtype = DataType::kFloat;
  if (const onnx::TensorProto* t = ctx.node().GetTensor("value"); t != nullptr && IsKnownDataType(t->data_type())) {
    dtype = static_cast<DataType>(t->data_type());
  }
  if (const auto* dims = ctx.InputValues(0)) {
    ctx.SetOutput(0, dtype, Shape(dims->begin(), dims->end()));
    return Status::Ok();
  }
  IntListArg arg = ReadIntList(ctx, "", 0);
  if (arg.length.has_value()) {
    ctx.SetOutput(0, dtype, ctx.FreshShape(0, static_cast<size_t>(*arg.length), "ConstantOfShape shape input not constant"));
  } else {
    ctx.SetOutput(0, dtype, std::nullopt);
    ctx.Diagnose(ctx.OutputName(0), "rank unresolved: ConstantOfShape shape input of unknown length");
  }
  return Status::Ok();
}

/// Range: length max(ceil((limit - start) / delta), 0).
Status RangeRule(InferContext& ctx) {
  const DataType dtype = ctx.InputType(0) != DataType::kUndefined ? ctx.InputType(0) : ctx.InputType(1);
  const auto* start = ctx.InputValues(0);
  const auto* limit = ctx.InputValues(1);
  const auto* delta = ctx.InputValues(2);
  if (start == nullptr || limit == nullptr || delta == nullptr || start->size() != 1 || limit->size() != 1 ||
      delta->size() != 1) {
    ctx.SetOutput(0, dtype, Shape{ctx.FreshDim(0, 0, "Range bounds not constant")});
    return Status::Ok();
  }
  const SymExpr span = (*limit)[0] - (*start)[0];
  const auto step = (*delta)[0].AsInt();
  if (!step.has_value() || *step == 0) {
    ctx.SetOutput(0, dtype, Shape{ctx.FreshDim(0, 0, "Range delta not a non-zero constant")});
    return Status::Ok();
  }
  SymExpr len = *step == 1 ? span : SymExpr::CeilDiv(*step > 0 ? span : -span, SymExpr(*step > 0 ? *step : -*step));
  if (auto c = len.AsInt(); c.has_value() && *c < 0) len = SymExpr(0);
  ctx.SetOutput(0, dtype, Shape{len});
  return Status::Ok();
}

/// *Like ops and Bernoulli: input's shape; dtype attribute or the input's dtype.
Status LikeRule(InferContext& ctx) {
  const int64_t attr = ctx.node().GetInt("dtype", 0);
  const DataType dtype = IsKnownDataType(static_cast<int32_t>(attr)) ? static_cast<DataType>(attr) : ctx.InputType(0);
  const Shape* s = ctx.InputShape(0);
  ctx.SetOutput(0, dtype, s ? std::optional<Shape>(*s) : std::nullopt);
  return Status::Ok();
}

/// RandomNormal / RandomUniform: shape attribute; dtype attribute (default float).
Status RandomRule(InferContext& ctx) {
  const int64_t attr = ctx.node().GetInt("dtype", 1);
  const DataType dtype = IsKnownDataType(static_cast<int32_t>(attr)) ? static_cast<DataType>(attr) : DataType::kFloat;
  Shape s;
  for (int64_t d : ctx.node().GetInts("shape")) s.emplace_back(d);
  ctx.SetOutput(0, dtype, std::move(s));
  return Status::Ok();
}

Status MultinomialRule(InferContext& ctx) {
  const int64_t attr = ctx.node().GetInt("dtype", 6);
  const DataType dtype = IsKnownDataType(static_cast<int32_t>(attr)) ? static_cast<DataType>(attr) : DataType::kInt32;
  const Shape* in = ctx.InputShape(0);
  const SymExpr samples(ctx.node().GetInt("sample_size", 1));
  if (in == nullptr || in->size() != 2) {
    ctx.SetOutput(0, dtype, Shape{ctx.FreshDim(0, 0, "Multinomial input of unknown shape"), samples});
    return Status::Ok();
  }
  ctx.SetOutput(0, dtype, Shape{(*in)[0], samples});
  return Status::Ok();
}

}  // namespace

static void RegisterGeneratorRules(RuleRegistry& r) {
  r.Add("", "Shape", ShapeRule);
  r.Add("", "Size", SizeRule);
  r.Add("", "Constant", ConstantRule);
  r.Add("", "ConstantOfShape", ConstantOfShapeRule);
  r.Add("", "Range", RangeRule);
  for (const char* op : {"EyeLike", "RandomNormalLike", "RandomUniformLike", "Bernoulli"}) r.Add("", op, LikeRule);
  r.Add("", "RandomNormal", RandomRule);
  r.Add("", "RandomUniform", RandomRule);
  r.Add("", "Multinomial", MultinomialRule);
}

}  // namespace memopt::shape

MEMOPT_OPS(generate, generate_shape) {
  memopt::shape::RuleRegistry r(ops);
  memopt::shape::RegisterGeneratorRules(r);
}
