// com.microsoft BiasAdd (version 1): Y = X + bias + skip, X and skip (N, S, C), bias (C), float
// types. ONNX Runtime's transformer optimizer fuses it into diffusion models' UNets (the bias of a
// projection plus the residual), and ORT runs it on CUDA only.
//
// The op's definition: its decode (bias_add.h), shape rule, gradient rule and cost class; the
// kernels register in bias_add_cpu.cc and cuda/ops/elementwise/bias_add.cc. docs/adding_an_op.md
// walks through these files.
#include "ops/elementwise/bias_add.h"

#include <string>

#include "exec/kernels/kernel_util.h"
#include "grad/grad_context.h"
#include "ir/op_registry.h"
#include "shape/infer_context.h"

namespace memopt::bias_add {

Expected<BiasAddPlan> DecodeBiasAdd(const Tensor& x, const Tensor& bias, const Tensor& skip) {
  const DataType t = x.dtype();
  if (t != DataType::kFloat && t != DataType::kFloat16 && t != DataType::kBfloat16 && t != DataType::kDouble) {
    return InvalidInput("X is " + DataTypeName(t) + "; BiasAdd takes float, float16, bfloat16 or double");
  }
  if (bias.dtype() != t || skip.dtype() != t) {
    return InvalidInput("bias (" + DataTypeName(bias.dtype()) + ") and skip (" + DataTypeName(skip.dtype()) +
                        ") must have X's type " + DataTypeName(t));
  }
  if (x.rank() != 3) return InvalidInput("X " + ShapeToString(x.shape()) + " must be 3-D (N, S, C)");
  if (skip.shape() != x.shape()) {
    return InvalidInput("skip " + ShapeToString(skip.shape()) + " must have X's shape " + ShapeToString(x.shape()));
  }
  if (bias.rank() != 1 || bias.dim(0) != x.dim(2)) {
    return InvalidInput("bias " + ShapeToString(bias.shape()) + " must be 1-D with X's channel count " +
                        std::to_string(x.dim(2)));
  }
  return BiasAddPlan{x.dim(0) * x.dim(1), x.dim(2)};
}

namespace {

/// Y has X's type and shape. X must be 3-D and bias 1-D where their ranks are known; equal dims
/// of X, skip and bias teach the driver what their symbols are.
Status BiasAddShape(shape::InferContext& ctx) {
  const Shape* x = ctx.InputShape(0);
  const Shape* bias = ctx.InputShape(1);
  const Shape* skip = ctx.InputShape(2);
  if (x != nullptr && x->size() != 3) return ctx.Error("X must be 3-D (N, S, C), not rank " + std::to_string(x->size()));
  if (bias != nullptr && bias->size() != 1) {
    return ctx.Error("bias must be 1-D (C), not rank " + std::to_string(bias->size()));
  }
  if (skip != nullptr && skip->size() != 3) {
    return ctx.Error("skip must be 3-D (N, S, C), not rank " + std::to_string(skip->size()));
  }
  if (x != nullptr && bias != nullptr) ctx.RequireEqualDims((*x)[2], (*bias)[0]);
  if (x != nullptr && skip != nullptr) {
    for (size_t d = 0; d < 3; ++d) ctx.RequireEqualDims((*x)[d], (*skip)[d]);
  }
  ctx.CopyInputToOutput(0, 0);
  return Status::Ok();
}

/// dX = dskip = dY; dbias = dY summed over N and S.
Status BiasAddGrad(grad::NodeGrad& g) {
  if (g.NeedGI(0)) g.Emit("Identity", {g.GO(0)}, {g.GI(0)});
  if (g.NeedGI(1)) g.ReduceSum(g.GO(0), {0, 1}, false, g.GI(1));
  if (g.NeedGI(2)) g.Emit("Identity", {g.GO(0)}, {g.GI(2)});
  return Status::Ok();
}

}  // namespace
}  // namespace memopt::bias_add

MEMOPT_OPS(elementwise, bias_add) {
  using namespace memopt;
  ops.SetShape(kMicrosoftDomain, "BiasAdd", bias_add::BiasAddShape);
  ops.SetGrad(kMicrosoftDomain, "BiasAdd", {bias_add::BiasAddGrad});
  ops.SetCost(kMicrosoftDomain, "BiasAdd", {CostKind::kElementwise, 2});  // two additions per element
}
