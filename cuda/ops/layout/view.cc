// Ops that only relabel a tensor on the GPU: Identity, Reshape, Flatten, Squeeze, Unsqueeze and
// YieldOp share the input's block (no copy; memory accounting still counts their outputs as new
// values, like the CPU executor and the static estimate); Shape and Size read the metadata.
// The output shapes come from the CPU kernels themselves, run on a storage-less Tensor::Meta of
// the input, so both backends apply one set of shape rules and report the same errors.
#include <set>

#include "cuda_kernel.h"
#include "host_fallback.h"
#include "kernel_util.h"

namespace memopt::cuda {
namespace {

/// The node's CPU kernel run with input 0 as metadata only and the other (small integer:
/// shape, axes) inputs as host tensors: its output 0.
Expected<Tensor> RunCpuOnMetadata(const CudaKernelContext& ctx) {
  MEMOPT_RETURN_IF_ERROR(RequireInput(ctx, 0, "data"));
  MEMOPT_ASSIGN_OR_RETURN(std::vector<Tensor> outputs, RunCpuKernel(ctx, nullptr, 0));
  if (outputs.empty() || !outputs[0].defined()) {
    return InternalError("node " + ctx.node->Describe() + ": the shape rule produced no output");
  }
  return std::move(outputs[0]);
}

Status ViewKernel(CudaKernelContext& ctx) {
  MEMOPT_ASSIGN_OR_RETURN(Tensor shaped, RunCpuOnMetadata(ctx));
  ctx.outputs[0] = ctx.input(0).Reshaped(shaped.shape());
  return Status::Ok();
}

/// Shape, Size: a small int64 result computed on the host, uploaded (and mirrored).
Status MetadataKernel(CudaKernelContext& ctx) {
  MEMOPT_ASSIGN_OR_RETURN(Tensor result, RunCpuOnMetadata(ctx));
  auto uploaded = DeviceTensor::Upload(ctx.pool, result);
  if (!uploaded.ok()) return ctx.Error(uploaded.status().message());
  ctx.outputs[0] = std::move(uploaded).value();
  return Status::Ok();
}

Status IdentityKernel(CudaKernelContext& ctx) {
  MEMOPT_RETURN_IF_ERROR(RequireInput(ctx, 0, "input"));
  ctx.outputs[0] = ctx.input(0);
  return Status::Ok();
}

/// com.microsoft YieldOp: as the CPU executor (lib/ops/training/yield_op_cpu.cc), output j is the
/// incoming gradient of the j-th differentiable module output (exec/output_gradients.h), made on
/// the host from the output's shape and uploaded.
Status YieldOpKernel(CudaKernelContext& ctx) {
  static const OutputGradients kDefaults;
  const OutputGradients& options = ctx.output_grads != nullptr ? *ctx.output_grads : kDefaults;
  for (size_t j = 0; j < ctx.outputs.size(); ++j) {
    MEMOPT_ASSIGN_OR_RETURN(const int i, YieldInputForOutput(*ctx.node, j));
    if (ctx.node->outputs[j] == kNone) continue;
    if (!ctx.has_input(i)) return ctx.Error("input " + std::to_string(i) + " is missing");
    const DeviceTensor& forward = ctx.input(i);
    auto gradient = IncomingGradient(YieldGradientName(*ctx.node, ctx.graph, j),
                                     forward.Meta(), ctx.run_seed, options);
    if (!gradient.ok()) return ctx.Error(gradient.status().message());
    auto uploaded = DeviceTensor::Upload(ctx.pool, *gradient);
    if (!uploaded.ok()) return ctx.Error(uploaded.status().message());
    ctx.outputs[j] = std::move(uploaded).value();
  }
  return Status::Ok();
}

}  // namespace

MEMOPT_CUDA_OPS(layout, view) {
  for (const char* op : {"Reshape", "Flatten", "Squeeze", "Unsqueeze"}) r.Register("", op, ViewKernel);
  r.Register("", "Shape", MetadataKernel);
  r.Register("", "Size", MetadataKernel);
  r.Register("", "Identity", IdentityKernel);
  r.Register("com.microsoft", "YieldOp", YieldOpKernel);
}

}  // namespace memopt::cuda
