// The CUDA kernel of Equal (ONNX, with broadcasting; bool output), which the gradients of Max, Min,
// ReduceMax, ReduceMin and ReduceL2 emit: the inputs' types and broadcast checked as the CPU
// kernel does, then one launch (compare.cu).
#include "compare_launch.h"
#include "cuda_kernel.h"
#include "elem_type.h"
#include "kernel_util.h"

namespace memopt::cuda {
namespace {

Status Equal(CudaKernelContext& ctx) {
  MEMOPT_RETURN_IF_ERROR(RequireInput(ctx, 0, "A"));
  MEMOPT_RETURN_IF_ERROR(RequireInput(ctx, 1, "B"));
  const DeviceTensor& a = ctx.input(0);
  const DeviceTensor& b = ctx.input(1);
  if (a.dtype() != b.dtype()) {
    return ctx.Error("inputs have different types (" + a.Describe() + ", " + b.Describe() + ")");
  }
  const auto t = ToElemType(a.dtype());
  if (!t || *t == ElemType::kF64) return ctx.UnsupportedType(a.dtype());
  auto out_shape = BroadcastShapes(a.shape(), b.shape());
  if (!out_shape.ok()) return ctx.Error(out_shape.status().message());
  MEMOPT_RETURN_IF_ERROR(ctx.AllocateOutput(0, DataType::kBool, *out_shape));
  DeviceTensor& y = ctx.outputs[0];
  bool* out = static_cast<bool*>(y.raw());
  if (a.shape() == b.shape()) {
    return Launched(ctx, LaunchEqual(*t, a.raw(), b.raw(), out, y.numel(), nullptr, ctx.stream()));
  }
  auto bc = MakeBroadcast(a.shape(), b.shape(), y.shape());
  if (!bc.ok()) return ctx.Error(bc.status().message());
  return Launched(ctx, LaunchEqual(*t, a.raw(), b.raw(), out, y.numel(), &*bc, ctx.stream()));
}

}  // namespace

MEMOPT_CUDA_OPS(elementwise, compare) { r.Register("", "Equal", Equal); }

}  // namespace memopt::cuda
