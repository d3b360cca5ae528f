// Gradient rules of activations and softmax, using ORT's com.microsoft gradient ops
// (ort_training_ops.md §3.1-3.8, 3.14): ReluGrad, LeakyReluGrad, SigmoidGrad, TanhGrad, GeluGrad,
// FastGeluGrad, BiasGeluGrad_dX, BiasFastGeluGrad_dX, QuickGeluGrad, SoftmaxGrad(_13),
// LogSoftmaxGrad(_13). Dropout's is in ops/dropout/dropout.cc.
#include "grad/grad_context.h"
#include "ir/op_registry.h"

namespace memopt::grad {
namespace {

/// ReluGrad reads the forward output: Y > 0 exactly where X > 0, and Y is usually kept anyway
/// (the next MatMul stashes it).
Status ReluGrad(NodeGrad& g) {
  g.Emit("ReluGrad", {g.GO(0), g.O(0)}, {g.GI(0)}, {}, kMsDomain);
  return Status::Ok();
}

/// LeakyReluGrad(dY, Y): dX = dY * (Y > 0 ? 1 : alpha). For alpha <= 0 the sign of Y no longer
/// tells that of X, so X is passed (same predicate on the input).
Status LeakyReluGrad(NodeGrad& g) {
  const float alpha = g.node().GetFloat("alpha", 0.01f);
  const std::string y_or_x = alpha > 0 ? g.O(0) : g.I(0);
  g.Emit("LeakyReluGrad", {g.GO(0), y_or_x}, {g.GI(0)}, {AttrFloat("alpha", alpha)}, kMsDomain);
  return Status::Ok();
}

Status SigmoidGrad(NodeGrad& g) {
  g.Emit("SigmoidGrad", {g.GO(0), g.O(0)}, {g.GI(0)}, {}, kMsDomain);
  return Status::Ok();
}

Status TanhGrad(NodeGrad& g) {
  g.Emit("TanhGrad", {g.GO(0), g.O(0)}, {g.GI(0)}, {}, kMsDomain);
  return Status::Ok();
}

Status SoftplusGrad(NodeGrad& g) {  // d log(1 + e^x) = sigmoid(x)
  g.Emit("Mul", {g.GO(0), g.Op("Sigmoid", {g.I(0)})}, {g.GI(0)});
  return Status::Ok();
}

/// ms Gelu and ONNX Gelu-20 (approximate = "none" | "tanh").
Status GeluGrad(NodeGrad& g) {
  const bool tanh = g.node().GetString("approximate", "none") == "tanh";
  g.Emit(tanh ? "FastGeluGrad" : "GeluGrad", {g.GO(0), g.I(0)}, {g.GI(0)}, {}, kMsDomain);
  return Status::Ok();
}

Status QuickGeluGrad(NodeGrad& g) {
  g.Emit("QuickGeluGrad", {g.GO(0), g.I(0)}, {g.GI(0)}, g.CopyAttrs(), kMsDomain);
  return Status::Ok();
}

/// Bias gradient of BiasGelu / FastGelu: dX summed over every axis but the last.
void BiasFromInputGrad(NodeGrad& g, const std::string& dx) {
  g.ReduceTo(dx, g.ShapeOf(g.I(0)), g.I(1), g.GI(1));
}

Status BiasGeluGrad(NodeGrad& g, const char* plain_op, const char* bias_op) {
  if (g.I(1).empty()) {
    g.Emit(plain_op, {g.GO(0), g.I(0)}, {g.GI(0)}, {}, kMsDomain);
    return Status::Ok();
  }
  const std::string dx = g.NeedGI(0) ? g.GI(0) : g.Tmp("BiasGeluGrad_dX");
  g.Emit(bias_op, {g.GO(0), g.I(0), g.I(1)}, {dx}, {}, kMsDomain);
  if (g.NeedGI(1)) BiasFromInputGrad(g, dx);
  return Status::Ok();
}

Status BiasGeluRule(NodeGrad& g) { return BiasGeluGrad(g, "GeluGrad", "BiasGeluGrad_dX"); }
Status FastGeluRule(NodeGrad& g) { return BiasGeluGrad(g, "FastGeluGrad", "BiasFastGeluGrad_dX"); }

/// Softmax: SoftmaxGrad (opset < 13 semantics: 2-D view at axis, default 1) or SoftmaxGrad_13
/// (single axis, default -1), reading the forward output.
Status SoftmaxGrad(NodeGrad& g) {
  const bool v13 = g.since_version() >= 13;
  const int64_t axis = g.node().GetInt("axis", v13 ? -1 : 1);
  const std::string op = std::string(g.node().op_type == "LogSoftmax" ? "LogSoftmaxGrad" : "SoftmaxGrad") +
                         (v13 ? "_13" : "");
  g.Emit(op, {g.GO(0), g.O(0)}, {g.GI(0)}, {AttrInt("axis", axis)}, kMsDomain);
  return Status::Ok();
}

}  // namespace

static void RegisterActivationGradRules(OpRegistry& r) {
  r.SetGrad("", "Relu", {ReluGrad, {}});
  r.SetGrad("", "LeakyRelu", {LeakyReluGrad, {}});
  r.SetGrad("", "Sigmoid", {SigmoidGrad, {}});
  r.SetGrad("", "Tanh", {TanhGrad, {}});
  r.SetGrad("", "Softplus", {SoftplusGrad, {}});
  r.SetGrad("", "Gelu", {GeluGrad, {}});
  r.SetGrad(kMsDomain, "Gelu", {GeluGrad, {}});
  r.SetGrad(kMsDomain, "QuickGelu", {QuickGeluGrad, {}});
  r.SetGrad(kMsDomain, "BiasGelu", {BiasGeluRule, {}});
  r.SetGrad(kMsDomain, "FastGelu", {FastGeluRule, {}});
  r.SetGrad("", "Softmax", {SoftmaxGrad, {}});
  r.SetGrad("", "LogSoftmax", {SoftmaxGrad, {}});
}

}  // namespace memopt::grad

MEMOPT_OPS(activation, activation_gradients) {
  memopt::grad::RegisterActivationGradRules(ops);
}
