// The CUDA kernel of com.microsoft DivGrad(dY, A, B) -> (dA, dB), which Div's gradient emits: the
// inputs checked as the CPU kernel does (index_grad_cpu.cc), each wanted output one launch
// (div_grad.cu) that sums over the dims its input was broadcast along.
#include <vector>

#include "cuda_kernel.h"
#include "div_grad_launch.h"
#include "elem_type.h"
#include "kernel_util.h"

namespace memopt::cuda {
namespace {

Status DivGrad(CudaKernelContext& ctx) {
  MEMOPT_RETURN_IF_ERROR(RequireFloat(ctx, 0, "dY"));
  MEMOPT_RETURN_IF_ERROR(RequireFloat(ctx, 1, "A"));
  MEMOPT_RETURN_IF_ERROR(RequireFloat(ctx, 2, "B"));
  const DeviceTensor& dy = ctx.input(0);
  const DeviceTensor& a = ctx.input(1);
  const DeviceTensor& b = ctx.input(2);
  if (a.dtype() != dy.dtype() || b.dtype() != dy.dtype()) {
    return ctx.Error("dY " + dy.Describe() + ", A " + a.Describe() + " and B " + b.Describe() +
                     " must have one type");
  }
  auto out_shape = BroadcastShapes(a.shape(), b.shape());
  if (!out_shape.ok() || *out_shape != dy.shape()) {
    return ctx.Error("dY " + dy.Describe() + " is not the broadcast of A " + a.Describe() + " and B " + b.Describe());
  }
  auto bc = MakeBroadcast(a.shape(), b.shape(), dy.shape());
  if (!bc.ok()) return ctx.Error(bc.status().message());
  const ElemType t = *ToElemType(dy.dtype());
  for (int i = 0; i < 2; ++i) {
    if (!ctx.output_wanted(i)) continue;
    const DeviceTensor& input = i == 0 ? a : b;
    MEMOPT_RETURN_IF_ERROR(ctx.AllocateOutput(i, input.dtype(), input.shape()));
    MEMOPT_RETURN_IF_ERROR(Launched(ctx, LaunchDivGrad(t, i == 0, dy.raw(), a.raw(), b.raw(), ctx.outputs[i].raw(),
                                                       input.numel(), *bc, ctx.stream())));
  }
  return Status::Ok();
}

}  // namespace

MEMOPT_CUDA_OPS(elementwise, div_grad) { r.Register("com.microsoft", "DivGrad", DivGrad); }

}  // namespace memopt::cuda
