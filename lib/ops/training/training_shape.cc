// com.microsoft training ops that are not gradients: the loss ops ORTModule exports
// (SoftmaxCrossEntropyLossInternal, NegativeLogLikelihoodLossInternal, the legacy
// SoftmaxCrossEntropy/SparseSoftmaxCrossEntropy), control and accumulation ops (YieldOp,
// PassThrough, Group, InPlaceAccumulator(V2), ZeroGradient, MixedPrecisionScale, ReduceAllL2),
// padding helpers (PadAndUnflatten, FlattenAndUnpad), BiasSoftmaxDropout, FakeQuant, and the
// PyTorch bridges ATen (org.pytorch.aten) and PythonOp.
// See ../shared/reference/ort_training_ops.md sections 2 and 4.
#include <set>

#include "ir/op_registry.h"
#include "shape/rule_registry.h"

namespace memopt::shape {

namespace {

std::optional<Shape> OptShape(const Shape* s) { return s ? std::optional<Shape>(*s) : std::nullopt; }

DataType OutputTypeAttr(const InferContext& ctx, DataType fallback) {
  if (!ctx.node().HasAttr("output_type")) return fallback;
  const int64_t raw = ctx.node().GetInt("output_type", 0);
  return IsKnownDataType(static_cast<int32_t>(raw)) ? static_cast<DataType>(raw) : fallback;
}

/// SoftmaxCrossEntropyLossInternal: loss = labels' shape for "none", else scalar; log_prob =
/// scores' shape; both of output_type when set.
Status SceLossInternalRule(InferContext& ctx) {
  const DataType dtype = OutputTypeAttr(ctx, ctx.InputType(0));
  const bool none = ctx.node().GetString("reduction", "mean") == "none";
  ctx.SetOutput(0, dtype, none ? OptShape(ctx.InputShape(1)) : std::optional<Shape>(Shape{}));
  ctx.SetOutput(1, dtype, OptShape(ctx.InputShape(0)));
  return Status::Ok();
}

/// Legacy SoftmaxCrossEntropy (one-hot labels): loss = logits without the class dim for "none".
Status LegacySceRule(InferContext& ctx) {
  const DataType dtype = ctx.InputType(0);
  const Shape* logits = ctx.InputShape(0);
  std::optional<Shape> loss = Shape{};
  if (ctx.node().GetString("reduction", "mean") == "none") {
    loss = logits != nullptr && !logits->empty() ? std::optional<Shape>(Shape(logits->begin(), logits->end() - 1))
                                                 : std::nullopt;
  }
  ctx.SetOutput(0, dtype, std::move(loss));
  ctx.SetOutput(1, dtype, OptShape(logits));
  return Status::Ok();
}

/// NLL-style losses with labels as input 1: labels' shape for "none", else scalar.
Status LabelLossRule(InferContext& ctx) {
  const DataType dtype = ctx.InputType(0);
  const bool none = ctx.node().GetString("reduction", "mean") == "none";
  ctx.SetOutput(0, dtype, none ? OptShape(ctx.InputShape(1)) : std::optional<Shape>(Shape{}));
  if (ctx.HasOutput(1)) ctx.SetOutput(1, dtype, OptShape(ctx.InputShape(0)));
  return Status::Ok();
}

/// YieldOp: output j is the j-th input not listed in non_differentiable_outputs; it gets that
/// input's dtype, and its shape only when the input index is in full_shape_outputs.
Status YieldOpRule(InferContext& ctx) {
  const std::vector<int64_t> full_list = ctx.node().GetInts("full_shape_outputs");
  const std::vector<int64_t> nondiff_list = ctx.node().GetInts("non_differentiable_outputs");
  const std::set<int64_t> full(full_list.begin(), full_list.end());
  const std::set<int64_t> nondiff(nondiff_list.begin(), nondiff_list.end());
  size_t j = 0;
  for (size_t i = 0; i < ctx.NumInputs(); ++i) {
    if (nondiff.count(static_cast<int64_t>(i)) != 0) continue;
    if (j >= ctx.NumOutputs()) {
      ctx.Diagnose(ctx.InputName(i), "YieldOp has fewer outputs than differentiable inputs");
      break;
    }
    if (full.count(static_cast<int64_t>(i)) != 0) {
      ctx.SetOutput(j, ctx.InputType(i), OptShape(ctx.InputShape(i)));
    } else {
      ctx.SetOutput(j, ctx.InputType(i), std::nullopt);
      if (ctx.HasOutput(j) && (ctx.DeclaredOutput(j) == nullptr || !ctx.DeclaredOutput(j)->shape.has_value())) {
        ctx.Diagnose(ctx.OutputName(j), "YieldOp output for input " + std::to_string(i) +
                                            " is not in full_shape_outputs and has no declared shape");
      }
    }
    ++j;
  }
  return Status::Ok();
}

/// PassThrough: outputs[i] = inputs[i], values included.
Status PassThroughRule(InferContext& ctx) {
  for (size_t i = 0; i < ctx.NumOutputs() && i < ctx.NumInputs(); ++i) {
    ctx.CopyInputToOutput(i, i);
    if (const auto* v = ctx.InputValues(i)) ctx.SetOutputValues(i, *v);
  }
  return Status::Ok();
}

Status SameAsInput(InferContext& ctx) {
  ctx.CopyInputToOutput(0, 0);
  return Status::Ok();
}

Status GroupRule(InferContext& ctx) {
  ctx.SetOutput(0, DataType::kBool, Shape{});
  return Status::Ok();
}

/// InPlaceAccumulatorV2: updated_flag bool [1]; accumulation_buffer_out = buffer.
Status InPlaceAccumulatorV2Rule(InferContext& ctx) {
  ctx.SetOutput(0, DataType::kBool, Shape{SymExpr(1)});
  if (ctx.HasOutput(1)) ctx.CopyInputToOutput(0, 1);
  return Status::Ok();
}

Status ReduceAllL2Rule(InferContext& ctx) {
  ctx.SetOutput(0, ctx.InputType(0), Shape{});
  return Status::Ok();
}

/// MixedPrecisionScale(S, X...): Y_i = X_i cast to 'to'; fuse_outputs=1 gives one flat buffer.
Status MixedPrecisionScaleRule(InferContext& ctx) {
  const int64_t raw = ctx.node().GetInt("to", 0);
  const DataType to = IsKnownDataType(static_cast<int32_t>(raw)) ? static_cast<DataType>(raw) : DataType::kUndefined;
  if (ctx.node().GetInt("fuse_outputs", 0) != 0) {
    SymExpr total(0);
    bool known = true;
    for (size_t i = 1; i < ctx.NumInputs(); ++i) {
      const Shape* s = ctx.InputShape(i);
      if (s == nullptr) {
        known = false;
        break;
      }
      total = total + NumElements(*s);
    }
    ctx.SetOutput(0, to, known ? std::optional<Shape>(Shape{total}) : std::nullopt);
    return Status::Ok();
  }
  for (size_t o = 0; o < ctx.NumOutputs(); ++o) ctx.SetOutput(o, to, OptShape(ctx.InputShape(o + 1)));
  return Status::Ok();
}

/// PadAndUnflatten(input [d1, d2..], indices [d1], unflatten_dims [M1, M2]):
/// output [M1, M2, d2..], flatten_output_shape int64 [N] = [M1*M2, d2..].
Status PadAndUnflattenRule(InferContext& ctx) {
  const Shape* in = ctx.InputShape(0);
  const auto* dims = ctx.InputValues(2);
  const DataType dtype = ctx.InputType(0);
  if (in == nullptr || in->empty()) {
    ctx.SetOutput(0, dtype, std::nullopt);
    ctx.SetOutput(1, DataType::kInt64, std::nullopt);
    return Status::Ok();
  }
  Shape out;
  if (dims != nullptr && dims->size() == 2) {
    out = {(*dims)[0], (*dims)[1]};
  } else {
    out = {ctx.FreshDim(0, 0, "unflatten_dims not constant"), ctx.FreshDim(0, 1, "unflatten_dims not constant")};
  }
  out.insert(out.end(), in->begin() + 1, in->end());
  std::vector<SymExpr> flat{out[0] * out[1]};
  flat.insert(flat.end(), in->begin() + 1, in->end());
  ctx.SetOutput(0, dtype, std::move(out));
  if (ctx.HasOutput(1)) {
    ctx.SetOutput(1, DataType::kInt64, Shape{SymExpr(static_cast<int64_t>(flat.size()))});
    ctx.SetOutputValues(1, std::move(flat));
  }
  return Status::Ok();
}

/// FlattenAndUnpad(input [M1, M2, d2..], indices [k]): output [k, d2..], unflatten_dims [M1, M2].
Status FlattenAndUnpadRule(InferContext& ctx) {
  const Shape* in = ctx.InputShape(0);
  const Shape* indices = ctx.InputShape(1);
  const DataType dtype = ctx.InputType(0);
  if (in == nullptr || in->size() < 2 || indices == nullptr || indices->size() != 1) {
    ctx.SetOutput(0, dtype, std::nullopt);
    ctx.SetOutput(1, DataType::kInt64, Shape{SymExpr(2)});
    return Status::Ok();
  }
  Shape out{(*indices)[0]};
  out.insert(out.end(), in->begin() + 2, in->end());
  ctx.SetOutput(0, dtype, std::move(out));
  if (ctx.HasOutput(1)) {
    ctx.SetOutput(1, DataType::kInt64, Shape{SymExpr(2)});
    ctx.SetOutputValues(1, {(*in)[0], (*in)[1]});
  }
  return Status::Ok();
}

/// BiasSoftmaxDropout: dropout_output, mask (bool), softmax_output, all of data's shape.
Status BiasSoftmaxDropoutRule(InferContext& ctx) {
  const Shape* data = ctx.InputShape(0);
  ctx.CopyInputToOutput(0, 0);
  if (ctx.HasOutput(1)) ctx.SetOutput(1, DataType::kBool, OptShape(data));
  if (ctx.HasOutput(2)) ctx.CopyInputToOutput(0, 2);
  return Status::Ok();
}

Status FakeQuantRule(InferContext& ctx) {
  ctx.CopyInputToOutput(0, 0);
  if (ctx.HasOutput(1)) ctx.SetOutput(1, DataType::kBool, OptShape(ctx.InputShape(0)));
  return Status::Ok();
}

/// ATen (org.pytorch.aten): embedding -> indices.shape + weight.shape[1:];
/// embedding_backward / embedding_dense_backward -> [num_weights, grad.shape[-1]]; other
/// operators are left to the declared value_info.
Status ATenRule(InferContext& ctx) {
  const std::string op = ctx.node().GetString("operator", "");
  if (op == "embedding") {
    const Shape* weight = ctx.InputShape(0);
    const Shape* indices = ctx.InputShape(1);
    if (weight == nullptr || indices == nullptr || weight->empty()) {
      ctx.SetOutput(0, ctx.InputType(0), std::nullopt);
      return Status::Ok();
    }
    Shape out = *indices;
    out.insert(out.end(), weight->begin() + 1, weight->end());
    ctx.SetOutput(0, ctx.InputType(0), std::move(out));
    return Status::Ok();
  }
  if (op == "embedding_backward" || op == "embedding_dense_backward") {
    const Shape* grad = ctx.InputShape(0);
    const auto* num = ctx.InputValues(2);
    std::optional<Shape> out;
    if (grad != nullptr && !grad->empty()) {
      out = Shape{num != nullptr && num->size() == 1 ? (*num)[0]
                                                     : ctx.FreshDim(0, 0, "embedding_backward num_weights not constant"),
                  grad->back()};
    }
    ctx.SetOutput(0, ctx.InputType(0), std::move(out));
    return Status::Ok();
  }
  ctx.Diagnose(ctx.OutputName(0), "ATen operator '" + op + "' has no shape rule; using the declared value_info");
  ctx.Decline();
  return Status::Ok();
}

/// PythonOp: output 0 is the int64 context; the others come from value_info, except for the
/// pass-through functions _InspectActivation / _IncrementStep.
Status PythonOpRule(InferContext& ctx) {
  ctx.SetOutput(0, DataType::kInt64, Shape{});
  const std::string func = ctx.node().GetString("func_name", "");
  const bool passthrough = func.find("_InspectActivation") != std::string::npos ||
                           func.find("_IncrementStep") != std::string::npos;
  if (passthrough) {
    for (size_t o = 1; o < ctx.NumOutputs(); ++o) ctx.CopyInputToOutput(o - 1, o);
    return Status::Ok();
  }
  if (ctx.NumOutputs() > 1) ctx.Decline();
  return Status::Ok();
}

Status DeclaredOnly(InferContext& ctx) {
  ctx.Decline();
  return Status::Ok();
}

}  // namespace

static void RegisterTrainingRules(RuleRegistry& r) {
  r.Add(kMsDomain, "SoftmaxCrossEntropyLossInternal", SceLossInternalRule);
  r.Add(kMsDomain, "SoftmaxCrossEntropy", LegacySceRule);
  r.Add("", "SparseSoftmaxCrossEntropy", LabelLossRule);
  r.Add(kMsDomain, "NegativeLogLikelihoodLossInternal", LabelLossRule);
  r.Add(kMsDomain, "NegativeLogLikelihoodLossInternal2", LabelLossRule);
  r.Add(kMsDomain, "YieldOp", YieldOpRule);
  r.Add(kMsDomain, "PassThrough", PassThroughRule);
  r.Add(kMsDomain, "Group", GroupRule);
  r.Add(kMsDomain, "InPlaceAccumulator", SameAsInput);
  r.Add(kMsDomain, "InPlaceAccumulatorV2", InPlaceAccumulatorV2Rule);
  r.Add(kMsDomain, "ZeroGradient", SameAsInput);
  r.Add(kMsDomain, "ReduceAllL2", ReduceAllL2Rule);
  r.Add(kMsDomain, "MixedPrecisionScale", MixedPrecisionScaleRule);
  r.Add(kMsDomain, "PadAndUnflatten", PadAndUnflattenRule);
  r.Add(kMsDomain, "FlattenAndUnpad", FlattenAndUnpadRule);
  r.Add(kMsDomain, "BiasSoftmaxDropout", BiasSoftmaxDropoutRule);
  r.Add(kMsDomain, "FakeQuant", FakeQuantRule);
  r.Add("org.pytorch.aten", "ATen", ATenRule);
  r.Add(kMsDomain, "ATenOp", DeclaredOnly);
  r.Add(kMsDomain, "PythonOp", PythonOpRule);
  r.Add(kMsDomain, "PythonOpGrad", DeclaredOnly);
}

}  // namespace memopt::shape

MEMOPT_OPS(training, training_shape) {
  memopt::shape::RuleRegistry r(ops);
  memopt::shape::RegisterTrainingRules(r);
}
