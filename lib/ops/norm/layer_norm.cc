// The layer normalisations: LayerNormalization (ONNX 17 and the ORT contrib form in domain ""),
// SimplifiedLayerNormalization (domain "" v1), RMSNormalization (opset 23), the com.microsoft
// inference fusions SkipLayerNormalization / SkipSimplifiedLayerNormalization
// (ort_training_ops.md 2.11-2.13), and their com.microsoft gradient ops LayerNormalizationGrad,
// SimplifiedLayerNormalizationGrad and InvertibleLayerNormalizationGrad (3.10-3.12).
//
// Each op's whole definition: the decode every backend calls (layer_norm.h), shape rules,
// gradient rules with the statistics they save, cost classes, and the CPU kernels
// (layer_norm_cpu.cc, layer_norm_grad_cpu.cc).
#include "ops/norm/layer_norm.h"

#include "exec/kernels/decode_inputs.h"
#include "exec/kernels/math_util.h"
#include "grad/grad_context.h"
#include "ir/op_registry.h"
#include "shape/infer_context.h"

namespace memopt {
namespace norm {


Expected<NormRows> DecodeNormRows(const Node& node, const Tensor& x) {
  const int64_t raw_axis = node.GetInt("axis", -1);
  auto axis = NormalizeAxis(raw_axis, x.rank());
  if (!axis) {
    return InvalidInput("axis " + std::to_string(raw_axis) + " is out of range for X " + ShapeToString(x.shape()));
  }
  NormRows v;
  v.axis = *axis;
  v.rows = ProductOf(x.shape(), 0, v.axis);
  v.cols = ProductOf(x.shape(), v.axis, x.rank());
  v.row_shape.assign(x.shape().begin() + v.axis, x.shape().end());
  v.stat_shape = x.shape();
  for (int64_t i = v.axis; i < x.rank(); ++i) v.stat_shape[static_cast<size_t>(i)] = 1;
  return v;
}

Expected<LayerNormGradPlan> DecodeLayerNormGrad(const Node& node, const std::vector<const Tensor*>& inputs) {
  auto in = [&](int i, const char* what) -> Expected<const Tensor*> {
    const Tensor* t = InputAt(inputs, i);
    if (t == nullptr) return InvalidInput("missing required input " + std::to_string(i) + " (" + what + ")");
    return t;
  };
  LayerNormGradPlan p;
  p.kind = node.op_type == "SimplifiedLayerNormalizationGrad"   ? GradKind::kSimplified
           : node.op_type == "InvertibleLayerNormalizationGrad" ? GradKind::kInvertible
                                                                : GradKind::kFull;
  MEMOPT_ASSIGN_OR_RETURN(const Tensor* dy, in(0, "Y_grad"));
  MEMOPT_ASSIGN_OR_RETURN(const Tensor* x, in(1, p.kind == GradKind::kInvertible ? "Y" : "X"));
  if (dy->numel() != x->numel()) {
    return InvalidInput("input 0 " + dy->Describe() + " and input 1 " + x->Describe() +
                        " must have the same number of elements");
  }
  if (x->rank() == 0) return InvalidInput("X must have rank >= 1");
  MEMOPT_ASSIGN_OR_RETURN(p.rows, DecodeNormRows(node, *x));
  auto per_column = [&](int i, const char* what) -> Status {
    MEMOPT_ASSIGN_OR_RETURN(const Tensor* t, in(i, what));
    if (t->numel() != p.rows.cols) {
      return InvalidInput(std::string(what) + " " + t->Describe() + " must have " + std::to_string(p.rows.cols) +
                          " elements (the normalised dims)");
    }
    return Status::Ok();
  };
  auto per_row = [&](int i, const char* what) -> Status {
    MEMOPT_ASSIGN_OR_RETURN(const Tensor* t, in(i, what));
    if (t->numel() != p.rows.rows) {
      return InvalidInput(std::string(what) + " " + t->Describe() + " must hold one value per row (" +
                          std::to_string(p.rows.rows) + " rows)");
    }
    return Status::Ok();
  };
  MEMOPT_RETURN_IF_ERROR(per_column(2, "scale"));
  if (p.kind == GradKind::kFull) {
    p.mean_input = 3;
    MEMOPT_RETURN_IF_ERROR(per_row(3, "mean"));
  } else if (p.kind == GradKind::kSimplified) {
    p.inv_input = 3;
  } else {
    p.bias_input = 3;
    MEMOPT_RETURN_IF_ERROR(per_column(3, "bias"));
  }
  MEMOPT_RETURN_IF_ERROR(per_row(p.inv_input, "inv_std_dev"));
  return p;
}

namespace {

/// A per-row parameter (Scale, B) broadcasts, right-aligned, to the normalised shape.
Status CheckParam(const Tensor& param, const char* name, const NormRows& v) {
  if (param.numel() == v.cols) return Status::Ok();
  auto b = BroadcastShape(param.shape(), v.row_shape);
  if (!b || *b != v.row_shape) {
    return InvalidInput(std::string(name) + " " + ShapeToString(param.shape()) +
                        " does not broadcast to the normalized shape " + ShapeToString(v.row_shape));
  }
  return Status::Ok();
}

}  // namespace

Expected<LayerNormPlan> DecodeLayerNorm(const Node& node, const Tensor& x, const Tensor& scale, const Tensor* bias) {
  LayerNormPlan p;
  MEMOPT_ASSIGN_OR_RETURN(p.rows, DecodeNormRows(node, x));
  MEMOPT_RETURN_IF_ERROR(CheckParam(scale, "Scale", p.rows));
  if (bias != nullptr) MEMOPT_RETURN_IF_ERROR(CheckParam(*bias, "B", p.rows));
  p.epsilon = node.GetFloat("epsilon", 1e-5f);
  p.stash =
      node.GetInt("stash_type", 1) == static_cast<int64_t>(DataType::kDouble) ? DataType::kDouble : DataType::kFloat;
  p.y_type = math::IsFloatFamily(scale.dtype()) ? scale.dtype() : x.dtype();
  return p;
}

Expected<SkipNormPlan> DecodeSkipNorm(const Node& node, const std::vector<const Tensor*>& inputs, bool simplified) {
  auto in = [&](int i) { return i < static_cast<int>(inputs.size()) ? inputs[static_cast<size_t>(i)] : nullptr; };
  if (in(1) == nullptr || in(2) == nullptr) return InvalidInput("skip and gamma are required");
  const Tensor& x = *in(0);
  const Tensor& skip = *in(1);
  const Tensor& gamma = *in(2);
  SkipNormPlan p;
  if (!simplified && in(3) != nullptr) p.beta_input = 3;
  if (in(simplified ? 3 : 4) != nullptr) p.bias_input = simplified ? 3 : 4;
  const Tensor* beta = p.beta_input >= 0 ? in(p.beta_input) : nullptr;
  const Tensor* bias = p.bias_input >= 0 ? in(p.bias_input) : nullptr;
  if (x.rank() < 1) return InvalidInput("input must have rank >= 1");
  p.hidden = x.dim(x.rank() - 1);
  p.rows = p.hidden > 0 ? x.numel() / p.hidden : 0;
  if (skip.numel() == 0 || x.numel() % skip.numel() != 0 || skip.rank() < 1 || skip.dim(skip.rank() - 1) != p.hidden) {
    return InvalidInput("skip " + ShapeToString(skip.shape()) + " does not match input " + ShapeToString(x.shape()));
  }
  p.skip_rows = skip.numel() / p.hidden;
  for (const Tensor* t : {&gamma, beta, bias}) {
    if (t != nullptr && t->numel() != p.hidden) {
      return InvalidInput("gamma/beta/bias " + ShapeToString(t->shape()) + " must have " + std::to_string(p.hidden) +
                          " elements (the hidden size)");
    }
  }
  p.epsilon = node.GetFloat("epsilon", 1e-12f);
  p.stat_shape = x.shape();
  p.stat_shape.back() = 1;
  return p;
}

namespace {

// ---- shape rules ----

std::optional<Shape> OptShape(const Shape* s) { return s ? std::optional<Shape>(*s) : std::nullopt; }

DataType StashType(const shape::InferContext& ctx) {
  const int64_t raw = ctx.node().GetInt("stash_type", 1);
  return IsKnownDataType(static_cast<int32_t>(raw)) ? static_cast<DataType>(raw) : DataType::kFloat;
}

/// X's shape with dims [axis, rank) set to 1 (the per-row statistics of the 2-D view at axis).
std::optional<Shape> StatsShape(shape::InferContext& ctx, const Shape* x, int64_t raw_axis) {
  if (x == nullptr) return std::nullopt;
  auto axis = shape::NormalizeAxis(raw_axis, static_cast<int64_t>(x->size()));
  if (!axis.has_value()) {
    ctx.Diagnose(ctx.OutputName(0), "normalization axis " + std::to_string(raw_axis) + " out of range for rank " +
                                        std::to_string(x->size()));
    return std::nullopt;
  }
  Shape s = *x;
  for (size_t k = static_cast<size_t>(*axis); k < s.size(); ++k) s[k] = SymExpr(1);
  return s;
}

/// LayerNormalization (ONNX-17 and the ORT contrib one) and SimplifiedLayerNormalization:
/// Y = X's shape with Scale's dtype; the statistics outputs are stash_type, X's shape reduced from
/// axis on. (The contrib SimplifiedLayerNormalization schema only sets dim[axis] to 1; kernels
/// write one value per row, which is what this rule gives; both agree for axis = -1.)
Status LayerNormShape(shape::InferContext& ctx) {
  const Shape* x = ctx.InputShape(0);
  const DataType y_type = ctx.InputType(1) != DataType::kUndefined ? ctx.InputType(1) : ctx.InputType(0);
  ctx.SetOutput(0, y_type, OptShape(x));
  const std::optional<Shape> stats = StatsShape(ctx, x, ctx.node().GetInt("axis", -1));
  for (size_t o = 1; o < ctx.NumOutputs(); ++o) ctx.SetOutput(o, StashType(ctx), stats);
  return Status::Ok();
}

/// RMSNormalization (opset 23): Y only, X's shape and type.
Status RmsNormShape(shape::InferContext& ctx) {
  ctx.CopyInputToOutput(0, 0);
  return Status::Ok();
}

/// SkipLayerNormalization / SkipSimplifiedLayerNormalization (ms): output and
/// input_skip_bias_sum = input; mean and inv_std_var = float, input with the last dim 1.
Status SkipLayerNormShape(shape::InferContext& ctx) {
  const Shape* x = ctx.InputShape(0);
  ctx.CopyInputToOutput(0, 0);
  const std::optional<Shape> stats = StatsShape(ctx, x, -1);
  if (ctx.HasOutput(1)) ctx.SetOutput(1, DataType::kFloat, stats);
  if (ctx.HasOutput(2)) ctx.SetOutput(2, DataType::kFloat, stats);
  if (ctx.HasOutput(3)) ctx.CopyInputToOutput(0, 3);
  return Status::Ok();
}

/// The gradients: dX like input 1 (X or Y), dScale and dBias like input 2 (scale).
Status LayerNormGradShape(shape::InferContext& ctx) {
  if (ctx.HasOutput(0)) ctx.CopyInputToOutput(1, 0);
  for (size_t o = 1; o < ctx.NumOutputs(); ++o) {
    if (ctx.HasOutput(o)) ctx.CopyInputToOutput(2, o);
  }
  return Status::Ok();
}

// ---- gradient rules (the builder gives the forward its Mean / InvStdDev outputs first) ----

Status LayerNormGrad(grad::NodeGrad& g) {
  if (g.O(1).empty() || g.O(2).empty()) {
    return InternalError("node " + g.node().Describe() + ": LayerNormalization has no Mean/InvStdDev outputs");
  }
  std::vector<std::string> outs = {g.GIOrTmp(0, true, "X_grad_unused"), g.GIOrTmp(1, false, ""),
                                   g.I(2).empty() ? std::string() : g.GIOrTmp(2, false, "")};
  while (outs.back().empty()) outs.pop_back();
  g.Emit("LayerNormalizationGrad", {g.GO(0), g.I(0), g.I(1), g.O(1), g.O(2)}, outs,
         {grad::AttrInt("axis", g.node().GetInt("axis", -1))}, grad::kMsDomain);
  return Status::Ok();
}

Status SimplifiedLayerNormGrad(grad::NodeGrad& g) {
  if (g.O(1).empty()) {
    return InternalError("node " + g.node().Describe() + ": SimplifiedLayerNormalization has no InvStdDev output");
  }
  std::vector<std::string> outs = {g.GIOrTmp(0, true, "X_grad_unused"), g.GIOrTmp(1, false, "")};
  while (outs.back().empty()) outs.pop_back();
  g.Emit("SimplifiedLayerNormalizationGrad", {g.GO(0), g.I(0), g.I(1), g.O(1)}, outs,
         {grad::AttrInt("axis", g.node().GetInt("axis", -1))}, grad::kMsDomain);
  return Status::Ok();
}

}  // namespace
}  // namespace norm
}  // namespace memopt

MEMOPT_OPS(norm, layer_norm) {
  using namespace memopt;
  const CostClass cost{CostKind::kElementwise, 8};

  ops.SetShape("", "LayerNormalization", norm::LayerNormShape);
  ops.SetGrad("", "LayerNormalization", {norm::LayerNormGrad, {}, {{1, "_saved_mean"}, {2, "_saved_inv_std_var"}}});
  ops.SetCost("", "LayerNormalization", cost);

  ops.SetShape("", "SimplifiedLayerNormalization", norm::LayerNormShape);
  ops.SetGrad("", "SimplifiedLayerNormalization", {norm::SimplifiedLayerNormGrad, {}, {{1, "_saved_inv_std_var"}}});
  ops.SetCost("", "SimplifiedLayerNormalization", cost);

  ops.SetShape("", "RMSNormalization", norm::RmsNormShape);
  ops.SetCost("", "RMSNormalization", cost);

  ops.SetShape(kMicrosoftDomain, "SkipLayerNormalization", norm::SkipLayerNormShape);
  ops.SetCost(kMicrosoftDomain, "SkipLayerNormalization", cost);

  ops.SetShape(kMicrosoftDomain, "SkipSimplifiedLayerNormalization", norm::SkipLayerNormShape);
  ops.SetCost(kMicrosoftDomain, "SkipSimplifiedLayerNormalization", cost);

  for (const char* op :
       {"LayerNormalizationGrad", "SimplifiedLayerNormalizationGrad", "InvertibleLayerNormalizationGrad"}) {
    ops.SetShape(kMicrosoftDomain, op, norm::LayerNormGradShape);
    }
}
