// ScaledTanh: y = alpha * tanh(beta * x), elementwise (ONNX Runtime's contrib op in the default
// domain, version 1; attributes alpha and beta, both required by ORT, default 1 here).
//
// The op's whole definition: shape rule, gradient rule and cost class; its CPU kernel
// registers in scaled_tanh_cpu.cc. docs/adding_an_op.md walks through this file.
#include "grad/grad_context.h"
#include "ir/op_registry.h"
#include "shape/infer_context.h"

namespace memopt {

namespace {

/// Same element type and shape as X.
Status ScaledTanhShape(shape::InferContext& ctx) {
  ctx.CopyInputToOutput(0, 0);
  return Status::Ok();
}

/// dX = dY * alpha * beta * (1 - tanh(beta x)^2) = TanhGrad(dY * alpha * beta, tanh(beta x)), with
/// ORT's com.microsoft TanhGrad(dY, Y) = dY * (1 - Y^2). Reads X, not Y (Y / alpha fails at
/// alpha = 0).
Status ScaledTanhGrad(grad::NodeGrad& g) {
  const DataType t = g.Dtype(g.I(0));
  const double alpha = g.node().GetFloat("alpha", 1.0f);
  const double beta = g.node().GetFloat("beta", 1.0f);
  const std::string tanh = g.Op("Tanh", {g.Op("Mul", {g.I(0), g.ScalarConst("Beta", t, beta)})});
  const std::string scaled_dy = g.Op("Mul", {g.GO(0), g.ScalarConst("AlphaBeta", t, alpha * beta)});
  g.Emit("TanhGrad", {scaled_dy, tanh}, {g.GI(0)}, {}, grad::kMsDomain);
  return Status::Ok();
}

}  // namespace
}  // namespace memopt

MEMOPT_OPS(activation, scaled_tanh) {
  using namespace memopt;
  ops.SetShape("", "ScaledTanh", ScaledTanhShape);
  ops.SetGrad("", "ScaledTanh", {ScaledTanhGrad});
  ops.SetCost("", "ScaledTanh", {CostKind::kElementwise, 4});  // a multiply, tanh, a multiply
}
