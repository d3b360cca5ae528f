// Shape rules of the ONNX losses, SoftmaxCrossEntropyLoss and NegativeLogLikelihoodLoss. (ORT's
// internal losses are in ops/training/training_shape.cc.)
#include <optional>

#include "ir/op_registry.h"
#include "shape/rule_registry.h"

namespace memopt::shape {
namespace {

std::optional<Shape> OptShape(const Shape* s) { return s ? std::optional<Shape>(*s) : std::nullopt; }

/// SoftmaxCrossEntropyLoss / NegativeLogLikelihoodLoss: loss = labels' shape for reduction
/// "none", else a scalar; log_prob (SCE output 1) = scores' shape.
Status LossRule(InferContext& ctx) {
  const DataType dtype = ctx.InputType(0);
  const bool none = ctx.node().GetString("reduction", "mean") == "none";
  ctx.SetOutput(0, dtype, none ? OptShape(ctx.InputShape(1)) : std::optional<Shape>(Shape{}));
  if (ctx.HasOutput(1)) ctx.SetOutput(1, dtype, OptShape(ctx.InputShape(0)));
  return Status::Ok();
}

}  // namespace
}  // namespace memopt::shape

MEMOPT_OPS(loss, loss_shape) {
  using namespace memopt::shape;
  RuleRegistry r(ops);
  r.Add("", "SoftmaxCrossEntropyLoss", LossRule);
  r.Add("", "NegativeLogLikelihoodLoss", LossRule);
}
