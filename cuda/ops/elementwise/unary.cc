// The CUDA kernels of Neg and Exp (float types), which the gradients of Sub (Neg) and
// ReduceLogSumExp (Exp) emit: the output has X's type and shape; one launch (unary.cu).
#include "cuda_kernel.h"
#include "elem_type.h"
#include "kernel_util.h"
#include "unary_launch.h"

namespace memopt::cuda {
namespace {

template <UnaryOp kOp>
Status Unary(CudaKernelContext& ctx) {
  MEMOPT_RETURN_IF_ERROR(RequireFloat(ctx, 0, "X"));
  const DeviceTensor& x = ctx.input(0);
  MEMOPT_RETURN_IF_ERROR(ctx.AllocateOutput(0, x.dtype(), x.shape()));
  return Launched(ctx, LaunchUnary(kOp, *ToElemType(x.dtype()), x.raw(), ctx.outputs[0].raw(), x.numel(), ctx.stream()));
}

}  // namespace

MEMOPT_CUDA_OPS(elementwise, unary) {
  r.Register("", "Neg", Unary<UnaryOp::kNeg>);
  r.Register("", "Exp", Unary<UnaryOp::kExp>);
}

}  // namespace memopt::cuda
