// KernelRegistry::Cpu(): the one list of every built-in CPU kernel. Each kernels/*.cc owner
// registers its ops in its Register*Kernels function; this file calls them all.
#include <set>

#include "exec/kernel.h"

namespace memopt {

namespace {

/// com.microsoft::YieldOp, the forward/backward boundary of ORTModule graphs. ORT never runs it
/// as a kernel (PyTorch supplies the gradients); the reference executor treats it as identity
/// from the differentiable module outputs (inputs not in non_differentiable_outputs, in order) to
/// the incoming gradients (outputs), so a training graph runs end to end.
Status YieldOpKernel(KernelContext& ctx) {
  const std::vector<int64_t> nondiff_list = ctx.node->GetInts("non_differentiable_outputs");
  const std::set<int64_t> nondiff(nondiff_list.begin(), nondiff_list.end());
  size_t j = 0;
  for (int i = 0; i < ctx.num_inputs() && j < ctx.outputs.size(); ++i) {
    if (nondiff.count(i) != 0) continue;
    if (ctx.output_wanted(static_cast<int>(j))) {
      if (!ctx.has_input(i)) return ctx.Error("input " + std::to_string(i) + " is missing");
      ctx.outputs[j] = ctx.input(i);  // shares the buffer; memory accounting counts it separately
    }
    ++j;
  }
  if (j < ctx.outputs.size()) {
    return ctx.Error("has " + std::to_string(ctx.outputs.size()) + " outputs but only " + std::to_string(j) +
                     " differentiable inputs");
  }
  return Status::Ok();
}

KernelRegistry BuildCpuRegistry() {
  KernelRegistry r;
  r.Register("com.microsoft", "YieldOp", YieldOpKernel);
  RegisterElementwiseKernels(r);
  RegisterReduceKernels(r);
  RegisterTensorKernels(r);
  RegisterMathKernels(r);
  RegisterTrainingKernels(r);
  RegisterAtenKernels(r);
  return r;
}

}  // namespace

const KernelRegistry& KernelRegistry::Cpu() {
  static const KernelRegistry registry = BuildCpuRegistry();
  return registry;
}

}  // namespace memopt
