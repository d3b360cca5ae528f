// Elementwise ops: unary (shape and dtype of the input), broadcasting binary/variadic ops,
// comparisons and logic (bool), Where, Cast/CastLike, quantization, and the
// same-shape activations of com.microsoft (Gelu, FastGelu, QuickGelu, BiasGelu, ...).
#include "ir/op_registry.h"
#include "shape/broadcast.h"
#include "shape/rule_registry.h"

namespace memopt::shape {

namespace {

std::vector<size_t> PresentInputs(const InferContext& ctx) {
  std::vector<size_t> ins;
  for (size_t i = 0; i < ctx.NumInputs(); ++i) {
    if (ctx.HasInput(i)) ins.push_back(i);
  }
  return ins;
}

DataType FirstKnownType(const InferContext& ctx, std::initializer_list<size_t> inputs) {
  for (size_t i : inputs) {
    if (ctx.InputType(i) != DataType::kUndefined) return ctx.InputType(i);
  }
  return DataType::kUndefined;
}

/// Output 0 = input 0 (dtype and shape).
Status SameAsInput(InferContext& ctx) {
  ctx.CopyInputToOutput(0, 0);
  return Status::Ok();
}

/// Output 0 = input 0 shape, bool.
Status SameShapeBool(InferContext& ctx) {
  const Shape* s = ctx.InputShape(0);
  ctx.SetOutput(0, DataType::kBool, s ? std::optional<Shape>(*s) : std::nullopt);
  return Status::Ok();
}

/// Broadcast of all present inputs; dtype of the first input with a known one.
Status BroadcastSameType(InferContext& ctx) {
  DataType t = DataType::kUndefined;
  for (size_t i : PresentInputs(ctx)) {
    if (ctx.InputType(i) != DataType::kUndefined) {
      t = ctx.InputType(i);
      break;
    }
  }
  ctx.SetOutput(0, t, BroadcastInputs(ctx, PresentInputs(ctx)));
  return Status::Ok();
}

/// Comparisons and logic ops: broadcast, bool.
Status BroadcastBool(InferContext& ctx) {
  ctx.SetOutput(0, DataType::kBool, BroadcastInputs(ctx, PresentInputs(ctx)));
  return Status::Ok();
}

Status WhereRule(InferContext& ctx) {
  ctx.SetOutput(0, FirstKnownType(ctx, {1, 2}), BroadcastInputs(ctx, {0, 1, 2}));
  return Status::Ok();
}

Status CastRule(InferContext& ctx) {
  const int64_t to = ctx.node().GetInt("to", 0);
  DataType t = DataType::kUndefined;
  if (IsKnownDataType(static_cast<int32_t>(to))) {
    t = static_cast<DataType>(to);
  } else {
    ctx.Diagnose(ctx.OutputName(0), "Cast has no valid 'to' attribute (" + std::to_string(to) + ")");
  }
  const Shape* s = ctx.InputShape(0);
  ctx.SetOutput(0, t, s ? std::optional<Shape>(*s) : std::nullopt);
  return Status::Ok();
}

Status CastLikeRule(InferContext& ctx) {
  const Shape* s = ctx.InputShape(0);
  ctx.SetOutput(0, ctx.InputType(1), s ? std::optional<Shape>(*s) : std::nullopt);
  return Status::Ok();
}

/// PRelu: unidirectional broadcast of slope to X, i.e. X's shape in a valid model.
Status PReluRule(InferContext& ctx) {
  ctx.SetOutput(0, ctx.InputType(0), BroadcastInputs(ctx, {0, 1}));
  return Status::Ok();
}

Status QuantizeLinearRule(InferContext& ctx) {
  DataType t = ctx.InputType(2);
  if (t == DataType::kUndefined) {
    const int64_t attr = ctx.node().GetInt("output_dtype", 0);
    t = IsKnownDataType(static_cast<int32_t>(attr)) ? static_cast<DataType>(attr) : DataType::kUint8;
  }
  const Shape* s = ctx.InputShape(0);
  ctx.SetOutput(0, t, s ? std::optional<Shape>(*s) : std::nullopt);
  return Status::Ok();
}

Status DequantizeLinearRule(InferContext& ctx) {
  DataType t = ctx.InputType(1);
  if (t == DataType::kUndefined) t = DataType::kFloat;
  const Shape* s = ctx.InputShape(0);
  ctx.SetOutput(0, t, s ? std::optional<Shape>(*s) : std::nullopt);
  return Status::Ok();
}

Status DynamicQuantizeLinearRule(InferContext& ctx) {
  const Shape* s = ctx.InputShape(0);
  ctx.SetOutput(0, DataType::kUint8, s ? std::optional<Shape>(*s) : std::nullopt);
  ctx.SetOutput(1, DataType::kFloat, Shape{});
  ctx.SetOutput(2, DataType::kUint8, Shape{});
  return Status::Ok();
}

/// IsAllFinite-style reductions to a bool scalar.
Status BoolScalar(InferContext& ctx) {
  ctx.SetOutput(0, DataType::kBool, Shape{});
  return Status::Ok();
}

constexpr const char* kUnarySameOps[] = {
    "Abs", "Neg", "Sqrt", "Reciprocal", "Erf", "Tanh", "Relu", "Sigmoid", "Exp", "Log", "Floor",
    "Ceil", "Round", "Sign", "Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh",
    "Acosh", "Atanh", "Softplus", "Softsign", "HardSigmoid", "HardSwish", "Elu", "Selu", "Celu",
    "LeakyRelu", "ThresholdedRelu", "Mish", "Gelu", "Identity", "Clip", "Shrink", "BitwiseNot",
    "Softmax", "LogSoftmax", "Hardmax", "CumSum", "CumProd", "Trilu", "LpNormalization",
    "MeanVarianceNormalization", "LRN", "ReverseSequence", "Swish",
};
constexpr const char* kBroadcastOps[] = {
    "Add", "Sub", "Mul", "Div", "Pow", "Mod", "BitShift", "BitwiseAnd", "BitwiseOr", "BitwiseXor",
    "Sum", "Max", "Min", "Mean",
};
constexpr const char* kBoolBroadcastOps[] = {
    "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor",
};
constexpr const char* kMsUnarySameOps[] = {
    "Gelu", "FastGelu", "QuickGelu", "BiasGelu", "Scale", "BiasSoftmax", "Trilu", "ScaledSum",
};

}  // namespace

static void RegisterElementwiseRules(RuleRegistry& r) {
  for (const char* op : kUnarySameOps) r.Add("", op, SameAsInput);
  for (const char* op : kBroadcastOps) r.Add("", op, BroadcastSameType);
  for (const char* op : kBoolBroadcastOps) r.Add("", op, BroadcastBool);
  for (const char* op : {"Not", "IsNaN", "IsInf"}) r.Add("", op, SameShapeBool);
  r.Add("", "Where", WhereRule);
  r.Add("", "Cast", CastRule);
  r.Add("", "CastLike", CastLikeRule);
  r.Add("", "BitCast", CastRule);  // same shape, element type `to` (equal element sizes)
  for (const char* op : {"MemcpyFromHost", "MemcpyToHost"}) r.Add("", op, SameAsInput);  // ORT's device copies
  r.Add("", "PRelu", PReluRule);
  r.Add("", "QuantizeLinear", QuantizeLinearRule);
  r.Add("", "DequantizeLinear", DequantizeLinearRule);
  r.Add("", "DynamicQuantizeLinear", DynamicQuantizeLinearRule);

  for (const char* op : kMsUnarySameOps) r.Add(kMsDomain, op, SameAsInput);
  r.Add(kMsDomain, "IsFinite", SameShapeBool);
  r.Add(kMsDomain, "IsAllFinite", BoolScalar);
}

}  // namespace memopt::shape

MEMOPT_OPS(elementwise, elementwise_shape) {
  memopt::shape::RuleRegistry r(ops);
  memopt::shape::RegisterElementwiseRules(r);
}
