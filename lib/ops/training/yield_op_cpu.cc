// The CPU kernel of com.microsoft::YieldOp, the forward/backward boundary of ORTModule graphs
// (its shape rule is in training_shape.cc).
#include "exec/kernel.h"
#include "exec/output_gradients.h"
#include "ir/op_registry.h"

namespace memopt {
namespace {

/// com.microsoft::YieldOp, the forward/backward boundary of ORTModule graphs. ORT never runs it
/// as a kernel (PyTorch supplies the gradients); the reference executor produces, for each output
/// j (the gradient of the j-th differentiable module output), the incoming gradient that
/// `loss.backward()` would feed (exec/output_gradients.h: given, 1 for a scalar loss, else ones
/// or seeded random values).
Status YieldOpKernel(KernelContext& ctx) {
  static const OutputGradients kDefaults;
  const OutputGradients& options = ctx.output_grads != nullptr ? *ctx.output_grads : kDefaults;
  for (size_t j = 0; j < ctx.outputs.size(); ++j) {
    MEMOPT_ASSIGN_OR_RETURN(const int i, YieldInputForOutput(*ctx.node, j));
    if (!ctx.output_wanted(static_cast<int>(j))) continue;
    if (!ctx.has_input(i)) return ctx.Error("input " + std::to_string(i) + " is missing");
    auto gradient =
        IncomingGradient(YieldGradientName(*ctx.node, ctx.graph, j), ctx.input(i), ctx.run_seed, options);
    if (!gradient.ok()) return ctx.Error(gradient.status().message());
    ctx.outputs[j] = std::move(gradient).value();
  }
  return Status::Ok();
}

}  // namespace

}  // namespace memopt

MEMOPT_OPS(training, yield_op_cpu) { ops.SetCpuKernel("com.microsoft", "YieldOp", memopt::YieldOpKernel); }
