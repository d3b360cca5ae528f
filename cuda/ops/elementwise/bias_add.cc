// The CUDA kernel of com.microsoft BiasAdd (lib/ops/elementwise/bias_add.cc): the shared decode
// checks the node as the CPU kernel does, then one launch (bias_add.cu).
#include <string>

#include "bias_add_launch.h"
#include "cuda_kernel.h"
#include "elem_type.h"
#include "kernel_util.h"
#include "ops/elementwise/bias_add.h"

namespace memopt::cuda {
namespace {

Status BiasAdd(CudaKernelContext& ctx) {
  MEMOPT_RETURN_IF_ERROR(RequireFloat(ctx, 0, "X"));
  MEMOPT_RETURN_IF_ERROR(RequireFloat(ctx, 1, "bias"));
  MEMOPT_RETURN_IF_ERROR(RequireFloat(ctx, 2, "skip"));
  const DeviceTensor& x = ctx.input(0);
  const DeviceTensor& bias = ctx.input(1);
  const DeviceTensor& skip = ctx.input(2);
  auto plan = bias_add::DecodeBiasAdd(x.Meta(), bias.Meta(), skip.Meta());
  if (!plan.ok()) return ctx.Error(plan.status().message());
  MEMOPT_RETURN_IF_ERROR(ctx.AllocateOutput(0, x.dtype(), x.shape()));
  return Launched(ctx, LaunchBiasAdd(*ToElemType(x.dtype()), x.raw(), bias.raw(), skip.raw(), ctx.outputs[0].raw(),
                                     plan->rows, plan->channels, ctx.stream()));
}

}  // namespace

MEMOPT_CUDA_OPS(elementwise, bias_add) { r.Register("com.microsoft", "BiasAdd", BiasAdd); }

}  // namespace memopt::cuda
