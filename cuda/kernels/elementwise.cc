// Node-level wrappers of the elementwise CUDA kernels: Add/Sub/Mul/Div (broadcasting), Relu,
// Gelu (ONNX and com.microsoft), FastGelu, BiasGelu and the Gelu gradients. They check inputs
// the way the CPU kernels do, allocate the output from the pool and launch (launch.h).
#include <algorithm>
#include <string>

#include "cuda_kernel.h"
#include "elem_type.h"
#include "kernel_util.h"
#include "exec/tensor.h"

namespace memopt::cuda {

Expected<std::vector<int64_t>> BroadcastShapes(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  const size_t rank = std::max(a.size(), b.size());
  std::vector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i + a.size() >= rank ? a[i + a.size() - rank] : 1;
    const int64_t db = i + b.size() >= rank ? b[i + b.size() - rank] : 1;
    if (da != db && da != 1 && db != 1) {
      auto text = [](const std::vector<int64_t>& s) {
        std::string t = "[";
        for (size_t k = 0; k < s.size(); ++k) t += (k ? ", " : "") + std::to_string(s[k]);
        return t + "]";
      };
      return InvalidInput("shapes " + text(a) + " and " + text(b) + " do not broadcast");
    }
    out[i] = da == 1 ? db : da;
  }
  return out;
}

Expected<BroadcastShape> MakeBroadcast(const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                                       const std::vector<int64_t>& out) {
  const size_t rank = out.size();
  const std::vector<int64_t> sa = Strides(a), sb = Strides(b);
  BroadcastShape bc;
  for (size_t i = 0; i < rank; ++i) {
    if (out[i] == 1) continue;
    if (bc.rank == kMaxRank) return Unsupported("more than 8 broadcast dims of size > 1");
    const size_t ia = i + a.size() - rank, ib = i + b.size() - rank;  // wraps when absent
    const bool has_a = i + a.size() >= rank, has_b = i + b.size() >= rank;
    bc.out_dims[bc.rank] = out[i];
    bc.a_strides[bc.rank] = has_a && a[ia] != 1 ? sa[ia] : 0;
    bc.b_strides[bc.rank] = has_b && b[ib] != 1 ? sb[ib] : 0;
    ++bc.rank;
  }
  return bc;
}

namespace {

template <BinaryOp kOp>
Status BinaryKernel(CudaKernelContext& ctx) {
  MEMOPT_RETURN_IF_ERROR(RequireFloat(ctx, 0, "A"));
  MEMOPT_RETURN_IF_ERROR(RequireFloat(ctx, 1, "B"));
  const DeviceTensor& a = ctx.input(0);
  const DeviceTensor& b = ctx.input(1);
  if (a.dtype() != b.dtype()) {
    return ctx.Error("inputs have different types (" + a.Describe() + ", " + b.Describe() + ")");
  }
  auto out_shape = BroadcastShapes(a.shape(), b.shape());
  if (!out_shape.ok()) return ctx.Error(out_shape.status().message());
  MEMOPT_RETURN_IF_ERROR(ctx.AllocateOutput(0, a.dtype(), *out_shape));
  DeviceTensor& y = ctx.outputs[0];
  const ElemType t = *ToElemType(a.dtype());
  if (a.shape() == b.shape()) {
    return Launched(ctx, LaunchBinary(kOp, t, a.raw(), b.raw(), y.raw(), y.numel(), nullptr, ctx.stream()));
  }
  auto bc = MakeBroadcast(a.shape(), b.shape(), y.shape());
  if (!bc.ok()) return ctx.Error(bc.status().message());
  return Launched(ctx, LaunchBinary(kOp, t, a.raw(), b.raw(), y.raw(), y.numel(), &*bc, ctx.stream()));
}

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

Status Cast(CudaKernelContext& ctx) {
  if (!ctx.has_input(0)) return ctx.Error("input is missing");
  const DeviceTensor& x = ctx.input(0);
  const auto to = static_cast<DataType>(ctx.node->GetInt("to", 0));
  const auto from_t = ToElemType(x.dtype());
  if (!from_t) return ctx.UnsupportedType(x.dtype());
  const auto to_t = ToElemType(to);
  if (!to_t) return ctx.UnsupportedType(to);
  MEMOPT_RETURN_IF_ERROR(ctx.AllocateOutput(0, to, x.shape()));
  return Launched(ctx, LaunchCast(*from_t, *to_t, x.raw(), ctx.outputs[0].raw(), x.numel(), ctx.stream()));
}

constexpr const char* kMs = "com.microsoft";

}  // namespace

void RegisterElementwiseKernels(CudaKernelRegistry& r) {
  r.Register("", "Add", BinaryKernel<BinaryOp::kAdd>);
  r.Register("", "Sub", BinaryKernel<BinaryOp::kSub>);
  r.Register("", "Mul", BinaryKernel<BinaryOp::kMul>);
  r.Register("", "Div", BinaryKernel<BinaryOp::kDiv>);
  r.Register("", "Relu", [](CudaKernelContext& ctx) { return Forward(ctx, Activation::kRelu, -1); });
  r.Register("", "Gelu", OnnxGelu);
  r.Register(kMs, "Gelu", [](CudaKernelContext& ctx) { return Forward(ctx, Activation::kGelu, -1); });
  r.Register(kMs, "FastGelu", [](CudaKernelContext& ctx) { return Forward(ctx, Activation::kFastGelu, 1); });
  r.Register(kMs, "BiasGelu", BiasGelu);
  r.Register(kMs, "GeluGrad", [](CudaKernelContext& ctx) { return Grad(ctx, ActivationGrad::kGeluGrad, -1); });
  r.Register(kMs, "FastGeluGrad",
             [](CudaKernelContext& ctx) { return Grad(ctx, ActivationGrad::kFastGeluGrad, -1); });
  r.Register(kMs, "BiasGeluGrad_dX", [](CudaKernelContext& ctx) { return Grad(ctx, ActivationGrad::kGeluGrad, 2); });
  r.Register(kMs, "BiasFastGeluGrad_dX",
             [](CudaKernelContext& ctx) { return Grad(ctx, ActivationGrad::kFastGeluGrad, 2); });
}

void RegisterCastKernels(CudaKernelRegistry& r) { r.Register("", "Cast", Cast); }

}  // namespace memopt::cuda
