// com.microsoft gradient ops (ort_training_ops.md section 3): most have dY's shape; the
// scatter-style grads take their shape from a shape *input* (GatherGrad, SliceGrad, ...), which
// value propagation usually knows symbolically (Shape(X) upstream); BroadcastGradientArgs is
// evaluated on symbolic shapes when every decision is clear.
#include <algorithm>

#include "ir/op_registry.h"
#include "shape/rule_registry.h"

namespace memopt::shape {

namespace {

std::optional<Shape> OptShape(const Shape* s) { return s ? std::optional<Shape>(*s) : std::nullopt; }

/// Output 0 = dY (input 0).
Status SameAsDy(InferContext& ctx) {
  ctx.CopyInputToOutput(0, 0);
  return Status::Ok();
}

/// Output `out` is a tensor whose shape is the value of input `shape_input`.
void ShapeFromInputValues(InferContext& ctx, size_t shape_input, size_t out, DataType dtype) {
  if (const auto* dims = ctx.InputValues(shape_input)) {
    ctx.SetOutput(out, dtype, Shape(dims->begin(), dims->end()));
    return;
  }
  IntListArg arg = ReadIntList(ctx, "", shape_input);
  if (arg.length.has_value()) {
    ctx.SetOutput(out, dtype, ctx.FreshShape(out, static_cast<size_t>(*arg.length),
                                              ctx.node().op_type + " shape input not known"));
  } else {
    ctx.SetOutput(out, dtype, std::nullopt);
    ctx.Diagnose(ctx.OutputName(out), "rank unresolved: " + ctx.node().op_type + " shape input of unknown length");
  }
}

Status GatherGradRule(InferContext& ctx) {  // (shape, indices, dY)
  ShapeFromInputValues(ctx, 0, 0, ctx.InputType(2));
  return Status::Ok();
}

Status GatherElementsGradRule(InferContext& ctx) {  // (dY, shape, indices)
  ShapeFromInputValues(ctx, 1, 0, ctx.InputType(0));
  return Status::Ok();
}

Status GatherNDGradRule(InferContext& ctx) {  // (shape, indices, update)
  ShapeFromInputValues(ctx, 0, 0, ctx.InputType(2));
  return Status::Ok();
}

Status SliceGradRule(InferContext& ctx) {  // (dY, shape, starts, ends, axes?, steps?)
  ShapeFromInputValues(ctx, 1, 0, ctx.InputType(0));
  return Status::Ok();
}

Status ResizeGradRule(InferContext& ctx) {  // (dY, X, roi?, scales?, sizes?): X's shape, dY's type
  ctx.SetOutput(0, ctx.InputType(0), OptShape(ctx.InputShape(1)));
  return Status::Ok();
}

/// Loss grads: d_logits has log_prob's shape (input 1); SCELossInternalGrad honours output_type.
Status LossGradRule(InferContext& ctx) {
  DataType dtype = ctx.InputType(1) != DataType::kUndefined ? ctx.InputType(1) : ctx.InputType(0);
  if (ctx.node().HasAttr("output_type")) {
    const int64_t raw = ctx.node().GetInt("output_type", 0);
    if (IsKnownDataType(static_cast<int32_t>(raw))) dtype = static_cast<DataType>(raw);
  }
  ctx.SetOutput(0, dtype, OptShape(ctx.InputShape(1)));
  return Status::Ok();
}

/// DivGrad(dY, A, B) -> dA (A's shape), dB (B's shape).
Status DivGradRule(InferContext& ctx) {
  const DataType dtype = ctx.InputType(0);
  if (ctx.HasOutput(0)) ctx.SetOutput(0, dtype, OptShape(ctx.InputShape(1)));
  if (ctx.HasOutput(1)) ctx.SetOutput(1, dtype, OptShape(ctx.InputShape(2)));
  return Status::Ok();
}

/// BatchNormalizationGrad: X_grad like input 1, the parameter grads like input 2 (the layer norm
/// gradients' rule is in ops/norm).
Status NormGradRule(InferContext& ctx) {
  if (ctx.HasOutput(0)) ctx.CopyInputToOutput(1, 0);
  for (size_t o = 1; o < ctx.NumOutputs(); ++o) {
    if (ctx.HasOutput(o)) ctx.CopyInputToOutput(2, o);
  }
  return Status::Ok();
}

/// ConvGrad / ConvTransposeGrad (dY, X, W) -> dX = X, dW = W, dB = [out channels].
Status ConvGradRule(InferContext& ctx) {
  if (ctx.HasOutput(0)) ctx.CopyInputToOutput(1, 0);
  if (ctx.HasOutput(1)) ctx.CopyInputToOutput(2, 1);
  if (ctx.HasOutput(2)) {
    const Shape* w = ctx.InputShape(2);
    std::optional<Shape> bias;
    if (ctx.node().op_type == "ConvTransposeGrad") {
      if (w != nullptr && w->size() >= 2) bias = Shape{(*w)[1] * SymExpr(ctx.node().GetInt("group", 1))};
    } else if (w != nullptr && !w->empty()) {
      bias = Shape{(*w)[0]};
    }
    ctx.SetOutput(2, ctx.InputType(0), std::move(bias));
  }
  return Status::Ok();
}

/// MaxPoolGrad(dY, Indices): dX has the shape of the forward MaxPool's input, found through the
/// producer of Indices.
Status MaxPoolGradRule(InferContext& ctx) {
  const Value* indices = ctx.InputValue(1);
  std::optional<Shape> out;
  if (indices != nullptr && indices->producer != kNone) {
    const Node& pool = ctx.graph().node(indices->producer);
    if (!pool.inputs.empty() && pool.inputs[0] != kNone) {
      const TensorInfo& x = ctx.graph().value(pool.inputs[0]).info;
      out = x.shape;
    }
  }
  ctx.SetOutput(0, ctx.InputType(0), std::move(out));
  if (!ctx.OutputInfo(0).shape.has_value()) ctx.Decline();
  return Status::Ok();
}

Status DeclaredOnly(InferContext& ctx) {
  ctx.Decline();
  return Status::Ok();
}

Status BatchScaleRule(InferContext& ctx) {
  for (size_t o = 0; o < ctx.NumOutputs(); ++o) ctx.CopyInputToOutput(0, o);
  return Status::Ok();
}

bool IsLiteralOne(const SymExpr& e) {
  auto v = e.AsInt();
  return v.has_value() && *v == 1;
}

/// BroadcastGradientArgs(a_shape, b_shape) -> (a_axes, b_axes): the output-coordinate axes each
/// operand was broadcast along, listed last to first. Evaluated when both shapes are known and
/// every differing pair has a literal 1 on one side; otherwise both lengths are fresh symbols.
Status BroadcastGradientArgsRule(InferContext& ctx) {
  const auto* a = ctx.InputValues(0);
  const auto* b = ctx.InputValues(1);
  std::vector<SymExpr> a_axes;
  std::vector<SymExpr> b_axes;
  bool decided = a != nullptr && b != nullptr;
  std::string why = "BroadcastGradientArgs inputs not known";
  if (decided) {
    const auto ra = static_cast<int64_t>(a->size());
    const auto rb = static_cast<int64_t>(b->size());
    const int64_t r = std::max(ra, rb);
    for (int64_t k = r - 1; k >= 0 && decided; --k) {
      const int64_t ia = k - (r - ra);
      const int64_t ib = k - (r - rb);
      if (ia < 0) {
        a_axes.emplace_back(k);
        continue;
      }
      if (ib < 0) {
        b_axes.emplace_back(k);
        continue;
      }
      const SymExpr& da = (*a)[ia];
      const SymExpr& db = (*b)[ib];
      if (da == db) continue;
      if (IsLiteralOne(da)) {
        a_axes.emplace_back(k);
      } else if (IsLiteralOne(db)) {
        b_axes.emplace_back(k);
      } else {
        decided = false;
        why = "data-dependent: BroadcastGradientArgs cannot compare " + da.ToString() + " and " + db.ToString();
      }
    }
  }
  for (size_t o = 0; o < 2; ++o) {
    if (!ctx.HasOutput(o)) continue;
    if (!decided) {
      ctx.SetOutput(o, DataType::kInt64, Shape{ctx.FreshDim(o, 0, why)});
      continue;
    }
    std::vector<SymExpr>& axes = o == 0 ? a_axes : b_axes;
    ctx.SetOutput(o, DataType::kInt64, Shape{SymExpr(static_cast<int64_t>(axes.size()))});
    ctx.SetOutputValues(o, std::move(axes));
  }
  return Status::Ok();
}

constexpr const char* kSameAsDyOps[] = {
    "GeluGrad", "FastGeluGrad", "BiasGeluGrad_dX", "BiasFastGeluGrad_dX", "QuickGeluGrad", "ReluGrad",
    "SigmoidGrad", "TanhGrad", "LeakyReluGrad", "SoftmaxGrad", "SoftmaxGrad_13", "LogSoftmaxGrad",
    "LogSoftmaxGrad_13", "SoftmaxDropoutGrad", "FakeQuantGrad",
    "GeluGradient",
};

}  // namespace

static void RegisterGradRules(RuleRegistry& r) {
  for (const char* op : kSameAsDyOps) r.Add(kMsDomain, op, SameAsDy);
  r.Add(kMsDomain, "GatherGrad", GatherGradRule);
  r.Add(kMsDomain, "GatherElementsGrad", GatherElementsGradRule);
  r.Add(kMsDomain, "GatherNDGrad", GatherNDGradRule);
  r.Add(kMsDomain, "SliceGrad", SliceGradRule);
  r.Add(kMsDomain, "ResizeGrad", ResizeGradRule);
  r.Add(kMsDomain, "SoftmaxCrossEntropyLossInternalGrad", LossGradRule);
  r.Add(kMsDomain, "SoftmaxCrossEntropyLossGrad", LossGradRule);
  r.Add(kMsDomain, "SoftmaxCrossEntropyGrad", LossGradRule);
  r.Add("", "SparseSoftmaxCrossEntropyGrad", LossGradRule);
  r.Add(kMsDomain, "DivGrad", DivGradRule);
  r.Add(kMsDomain, "BatchNormalizationGrad", NormGradRule);
  r.Add(kMsDomain, "ConvGrad", ConvGradRule);
  r.Add(kMsDomain, "ConvTransposeGrad", ConvGradRule);
  r.Add("", "MaxPoolGrad", MaxPoolGradRule);
  r.Add("", "AveragePoolGrad", DeclaredOnly);
  r.Add(kMsDomain, "LSTMGrad", DeclaredOnly);
  r.Add(kMsDomain, "GRUGrad", DeclaredOnly);
  r.Add(kMsDomain, "BatchScale", BatchScaleRule);
  r.Add(kMsDomain, "BroadcastGradientArgs", BroadcastGradientArgsRule);
}

}  // namespace memopt::shape

MEMOPT_OPS(training, grad_ops_shape) {
  memopt::shape::RuleRegistry r(ops);
  memopt::shape::RegisterGradRules(r);
}
