// Where, Gather and com.microsoft GatherGrad on the GPU. The wrappers check nodes as the CPU
// kernels do (lib/ops/elementwise/variadic_cpu.cc, ops/index/gather_cpu.cc, ops/index/index_grad_cpu.cc) and launch the
// kernels of ops/layout/data_movement.cu.
#include <string>
#include <vector>

#include "cuda_kernel.h"
#include "ops/layout/data_movement_launch.h"
#include "elem_type.h"
#include "exec/kernels/decode_inputs.h"
#include "exec/kernels/gather_plan.h"
#include "exec/kernels/kernel_util.h"
#include "kernel_util.h"

namespace memopt::cuda::dm {
namespace {

Status Where(CudaKernelContext& ctx) {
  for (int i = 0; i < 3; ++i) MEMOPT_RETURN_IF_ERROR(RequireInput(ctx, i, i == 0 ? "condition" : i == 1 ? "X" : "Y"));
  const DeviceTensor& c = ctx.input(0);
  const DeviceTensor& x = ctx.input(1);
  const DeviceTensor& y = ctx.input(2);
  auto cx = BroadcastShapes(c.shape(), x.shape());
  auto shape = cx.ok() ? BroadcastShapes(*cx, y.shape()) : cx;
  if (!shape.ok()) {
    return ctx.Error("input shapes " + ShapeToString(c.shape()) + ", " + ShapeToString(x.shape()) + ", " +
                     ShapeToString(y.shape()) + " cannot be broadcast together");
  }
  if (c.dtype() != DataType::kBool) return ctx.Error("condition must be bool, got " + DataTypeName(c.dtype()));
  if (x.dtype() != y.dtype()) {
    return ctx.Error("X and Y have different types " + DataTypeName(x.dtype()) + " and " + DataTypeName(y.dtype()));
  }
  MEMOPT_RETURN_IF_ERROR(RequireCopyable(ctx, x.dtype()));
  MEMOPT_RETURN_IF_ERROR(ctx.AllocateOutput(0, x.dtype(), *shape));
  DeviceTensor& out = ctx.outputs[0];
  if (out.numel() == 0) return Status::Ok();
  std::vector<int64_t> dims = *shape;
  std::vector<std::vector<int64_t>> strides = {BroadcastStrides(c.shape(), dims), BroadcastStrides(x.shape(), dims),
                                               BroadcastStrides(y.shape(), dims), Strides(dims)};
  if (!Collapse(dims, strides)) return TooManyDims(ctx);
  WhereShape ws;
  ws.rank = static_cast<int>(dims.size());
  for (int k = 0; k < ws.rank; ++k) {
    ws.dims[k] = dims[k];
    ws.cond_strides[k] = strides[0][k];
    ws.x_strides[k] = strides[1][k];
    ws.y_strides[k] = strides[2][k];
  }
  return Launched(ctx, LaunchWhere(static_cast<int>(ElemByteSize(x.dtype())), c.raw(), x.raw(), y.raw(), out.raw(),
                                   out.numel(), ws, ctx.stream()));
}

/// Indices of Gather/GatherGrad: int32 or int64 on the device. Where the host holds a copy
/// (small index tensors), out-of-range entries are reported as the CPU does; the kernels zero
/// (Gather) or skip (GatherGrad) the ones they meet otherwise.
Status CheckIndices(const CudaKernelContext& ctx, int i, int64_t dim) {
  const DeviceTensor& ind = ctx.input(i);
  if (ind.dtype() != DataType::kInt32 && ind.dtype() != DataType::kInt64) return ctx.UnsupportedType(ind.dtype());
  if (ind.host_mirror() == nullptr) return Status::Ok();
  for (int64_t j : ind.host_mirror()->ToInt64Vector()) {
    auto k = ResolveIndex(j, dim);
    if (!k.ok()) return ctx.Error(k.status().message());
  }
  return Status::Ok();
}

Status Gather(CudaKernelContext& ctx) {
  MEMOPT_RETURN_IF_ERROR(RequireInput(ctx, 0, "data"));
  MEMOPT_RETURN_IF_ERROR(RequireInput(ctx, 1, "indices"));
  const DeviceTensor& data = ctx.input(0);
  const DeviceTensor& ind = ctx.input(1);
  MEMOPT_RETURN_IF_ERROR(RequireCopyable(ctx, data.dtype()));
  auto plan = DecodeGather(*ctx.node, data.Meta(), ind.Meta());
  if (!plan.ok()) return ctx.Error(plan.status().message());
  MEMOPT_RETURN_IF_ERROR(CheckIndices(ctx, 1, plan->dim));
  MEMOPT_RETURN_IF_ERROR(ctx.AllocateOutput(0, data.dtype(), plan->shape));
  return Launched(ctx, LaunchGather(static_cast<int>(ElemByteSize(data.dtype())), data.raw(), ind.raw(),
                                    ind.dtype() == DataType::kInt64, ctx.outputs[0].raw(), plan->outer, plan->dim,
                                    plan->count, plan->inner, ctx.stream()));
}

Status GatherGrad(CudaKernelContext& ctx) {
  MEMOPT_ASSIGN_OR_RETURN(std::vector<int64_t> shape, ReadShape(ctx, 0, "shape"));
  MEMOPT_RETURN_IF_ERROR(RequireInput(ctx, 1, "indices"));
  MEMOPT_RETURN_IF_ERROR(RequireFloat(ctx, 2, "dY"));
  const DeviceTensor& ind = ctx.input(1);
  const DeviceTensor& dy = ctx.input(2);
  auto plan = DecodeGatherGrad(*ctx.node, shape, ind.Meta(), dy.Meta());
  if (!plan.ok()) return ctx.Error(plan.status().message());
  MEMOPT_RETURN_IF_ERROR(CheckIndices(ctx, 1, plan->dim));
  MEMOPT_RETURN_IF_ERROR(ctx.AllocateOutput(0, dy.dtype(), shape));
  DeviceTensor& dx = ctx.outputs[0];
  if (dx.numel() == 0) return Status::Ok();
  // float16/bfloat16 sums accumulate in float (as the CPU does), rounded once at the end.
  DeviceTensor scratch;
  float* acc = static_cast<float*>(dx.raw());
  if (dy.dtype() != DataType::kFloat) {
    auto s = DeviceTensor::Empty(ctx.pool, DataType::kFloat, shape);
    if (!s.ok()) return ctx.Error(s.status().message());
    scratch = std::move(s).value();
    acc = scratch.data<float>();
  }
  // The scratch block goes back to the pool when this returns; later users of it are ordered
  // after these kernels on the same stream.
  return Launched(ctx, LaunchGatherGrad(*ToElemType(dy.dtype()), dy.raw(), ind.raw(), ind.dtype() == DataType::kInt64,
                                        acc, dx.raw(), plan->outer, plan->dim, plan->count, plan->inner, ctx.stream()));
}

}  // namespace

}  // namespace memopt::cuda::dm

namespace memopt::cuda {

MEMOPT_CUDA_OPS(index, gather) {
  r.Register("", "Where", dm::Where);
  r.Register("", "Gather", dm::Gather);
  r.Register("com.microsoft", "GatherGrad", dm::GatherGrad);
}

}  // namespace memopt::cuda
