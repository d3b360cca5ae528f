#include "kernel_util.h"

#include "elem_type.h"

namespace memopt::cuda {

Status Launched(const CudaKernelContext& ctx, cudaError_t err) {
  if (err == cudaSuccess) return Status::Ok();
  return InternalError("node " + ctx.node->Describe() + ": kernel launch failed: " + cudaGetErrorName(err) + " (" +
                       cudaGetErrorString(err) + ")");
}

Status RequireInput(const CudaKernelContext& ctx, int i, const char* name) {
  if (!ctx.has_input(i)) return ctx.Error(std::string("input ") + name + " is missing");
  return Status::Ok();
}

Status RequireFloat(const CudaKernelContext& ctx, int i, const char* name) {
  MEMOPT_RETURN_IF_ERROR(RequireInput(ctx, i, name));
  if (!IsGpuFloat(ctx.input(i).dtype())) return ctx.UnsupportedType(ctx.input(i).dtype());
  return Status::Ok();
}

InputMetas::InputMetas(const CudaKernelContext& ctx) : metas_(ctx.inputs.size()), list_(ctx.inputs.size(), nullptr) {
  for (size_t i = 0; i < metas_.size(); ++i) {
    if (ctx.inputs[i] != nullptr) list_[i] = &(metas_[i] = ctx.inputs[i]->Meta());
  }
}

Expected<int64_t> NormalizeAxis(const CudaKernelContext& ctx, int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) {
    return ctx.Error("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  }
  return axis < 0 ? axis + rank : axis;
}

}  // namespace memopt::cuda
