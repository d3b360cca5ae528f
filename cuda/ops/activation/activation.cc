// Node-level wrappers of the activation CUDA kernels: Relu, Gelu (ONNX and com.microsoft),
// FastGelu, BiasGelu, ReluGrad and the Gelu gradients. They check inputs the way the CPU kernels do,
// allocate the output from the pool and launch (launch.h, activation.cu).
#include <string>

#include "cuda_kernel.h"
#include "elem_type.h"
#include "kernel_util.h"
#include "exec/tensor.h"

namespace memopt::cuda {
namespace {

/// The CPU kernels' bias rule: length divides X, and a 1-D bias runs along X's last dim.
Status CheckBias(const CudaKernelContext& ctx, int main_index, int bias_index) {
  MEMOPT_RETURN_IF_ERROR(RequireFloat(ctx, bias_index, "bias"));
  const DeviceTensor& x = ctx.input(main_index);
  const DeviceTensor& b = ctx.input(bias_index);
  bool ok = b.numel() > 0 && x.numel() % b.numel() == 0 && b.dtype() == x.dtype();
  if (ok && b.rank() == 1 && x.rank() > 0) ok = b.dim(0) == x.dim(x.rank() - 1);
  if (!ok) return ctx.Error("bias " + b.Describe() + " must be 1-D with the length of the last dim of " + x.Describe());
  return Status::Ok();
}

Status Forward(CudaKernelContext& ctx, Activation f, int bias_index) {
  MEMOPT_RETURN_IF_ERROR(RequireFloat(ctx, 0, "X"));
  const bool has_bias = bias_index >= 0 && ctx.has_input(bias_index);
  if (has_bias) MEMOPT_RETURN_IF_ERROR(CheckBias(ctx, 0, bias_index));
  const DeviceTensor& x = ctx.input(0);
  MEMOPT_RETURN_IF_ERROR(ctx.AllocateOutput(0, x.dtype(), x.shape()));
  const void* bias = has_bias ? ctx.input(bias_index).raw() : nullptr;
  const int64_t nbias = has_bias ? ctx.input(bias_index).numel() : 1;
  return Launched(ctx, LaunchActivation(f, *ToElemType(x.dtype()), x.raw(), bias, nbias, ctx.outputs[0].raw(),
                                        x.numel(), ctx.stream()));
}

Status Grad(CudaKernelContext& ctx, ActivationGrad f, int bias_index) {
  MEMOPT_RETURN_IF_ERROR(RequireFloat(ctx, 0, "dY"));
  MEMOPT_RETURN_IF_ERROR(RequireFloat(ctx, 1, "X"));
  const DeviceTensor& dy = ctx.input(0);
  const DeviceTensor& x = ctx.input(1);
  if (dy.numel() != x.numel() || dy.dtype() != x.dtype()) {
    return ctx.Error("dY " + dy.Describe() + " and X " + x.Describe() + " must have the same type and size");
  }
  if (bias_index >= 0) MEMOPT_RETURN_IF_ERROR(CheckBias(ctx, 1, bias_index));
  MEMOPT_RETURN_IF_ERROR(ctx.AllocateOutput(0, dy.dtype(), x.shape()));
  const void* bias = bias_index >= 0 ? ctx.input(bias_index).raw() : nullptr;
  const int64_t nbias = bias_index >= 0 ? ctx.input(bias_index).numel() : 1;
  return Launched(ctx, LaunchActivationGrad(f, *ToElemType(dy.dtype()), dy.raw(), x.raw(), bias, nbias,
                                            ctx.outputs[0].raw(), x.numel(), ctx.stream()));
}

Status OnnxGelu(CudaKernelContext& ctx) {
  const std::string approximate = ctx.node->GetString("approximate", "none");
  if (approximate != "none" && approximate != "tanh") return ctx.Error("unknown approximate '" + approximate + "'");
  return Forward(ctx, approximate == "tanh" ? Activation::kGeluTanh : Activation::kGelu, -1);
}

Status BiasGelu(CudaKernelContext& ctx) {
  if (!ctx.has_input(1)) return ctx.Error("input B is missing");
  return Forward(ctx, Activation::kGelu, 1);
}

constexpr const char* kMs = "com.microsoft";

}  // namespace

MEMOPT_CUDA_OPS(activation, activation) {
  r.Register("", "Relu", [](CudaKernelContext& ctx) { return Forward(ctx, Activation::kRelu, -1); });
  r.Register("", "Gelu", OnnxGelu);
  r.Register(kMs, "Gelu", [](CudaKernelContext& ctx) { return Forward(ctx, Activation::kGelu, -1); });
  r.Register(kMs, "FastGelu", [](CudaKernelContext& ctx) { return Forward(ctx, Activation::kFastGelu, 1); });
  r.Register(kMs, "BiasGelu", BiasGelu);
  r.Register(kMs, "ReluGrad", [](CudaKernelContext& ctx) { return Grad(ctx, ActivationGrad::kReluGrad, -1); });
  r.Register(kMs, "GeluGrad", [](CudaKernelContext& ctx) { return Grad(ctx, ActivationGrad::kGeluGrad, -1); });
  r.Register(kMs, "FastGeluGrad",
             [](CudaKernelContext& ctx) { return Grad(ctx, ActivationGrad::kFastGeluGrad, -1); });
  r.Register(kMs, "BiasGeluGrad_dX", [](CudaKernelContext& ctx) { return Grad(ctx, ActivationGrad::kGeluGrad, 2); });
  r.Register(kMs, "BiasFastGeluGrad_dX",
             [](CudaKernelContext& ctx) { return Grad(ctx, ActivationGrad::kFastGeluGrad, 2); });
}

}  // namespace memopt::cuda
