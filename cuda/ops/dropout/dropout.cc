// The Dropout family on the GPU: ONNX Dropout (every opset), com.microsoft BitmaskDropout,
// BiasDropout, BitmaskBiasDropout, DropoutGrad and BitmaskDropoutGrad. The decode (inputs, mode,
// ratio, mask kind, checks and messages) is the CPU's, ops/dropout/dropout.h; the seed comes from
// the same function (exec/dropout_seed.h) and the kernels draw the same Philox words, so the bool
// and bit-packed masks are bit-identical to the CPU's.
//
// The scalar inputs (ratio, training_mode) are read on the host: integer/bool ones from their host
// mirror, a float ratio by a small download (which waits for the stream). The decode reads the
// ratio only when training_mode says it is used.
#include "ops/dropout/dropout.h"

#include <string>
#include <vector>

#include "cuda_kernel.h"
#include "dropout_launch.h"
#include "elem_type.h"
#include "exec/dropout_seed.h"
#include "exec/kernels/training_util.h"
#include "exec/tensor.h"
#include "kernel_util.h"

namespace memopt::cuda {
namespace {

constexpr const char* kMs = "com.microsoft";

/// Element 0 of scalar input i read as the CPU's OptionalScalar does; `def` when absent or empty.
Expected<double> OptionalScalar(const CudaKernelContext& ctx, int i, double def) {
  if (!ctx.has_input(i) || ctx.input(i).numel() == 0) return def;
  const DeviceTensor& t = ctx.input(i);
  if (const Tensor* host = t.host_mirror()) return training::ScalarAsDouble(*host);
  MEMOPT_ASSIGN_OR_RETURN(const Tensor downloaded, t.Download());
  return training::ScalarAsDouble(downloaded);
}

dropout::ScalarReader Scalars(const CudaKernelContext& ctx) {
  return [&ctx](int i, double def) { return OptionalScalar(ctx, i, def); };
}

/// The CPU's DropoutScale of the float ratio, rounded to float like its `static_cast<C>`.
float ScaleFor(float ratio) { return static_cast<float>(DropoutScale(ratio)); }

Status MemsetStatus(const CudaKernelContext& ctx, cudaError_t err) {
  if (err == cudaSuccess) return Status::Ok();
  return ctx.Error(std::string("cudaMemsetAsync failed: ") + cudaGetErrorName(err));
}

DropoutMask KernelMask(dropout::MaskKind kind) {
  switch (kind) {
    case dropout::MaskKind::kBool:
      return DropoutMask::kBool;
    case dropout::MaskKind::kData:
      return DropoutMask::kData;
    case dropout::MaskKind::kBitmask:
      return DropoutMask::kBitmask;
  }
  return DropoutMask::kNone;
}

Status DropoutForward(CudaKernelContext& ctx) {
  MEMOPT_RETURN_IF_ERROR(RequireFloat(ctx, 0, "data"));
  auto plan = dropout::DecodeDropout(*ctx.node, InputMetas(ctx).list(), Scalars(ctx));
  if (!plan.ok()) return ctx.Error(plan.status().message());
  const dropout::DropoutPlan& a = *plan;
  if (a.bias >= 0) MEMOPT_RETURN_IF_ERROR(RequireFloat(ctx, a.bias, "bias"));
  if (a.residual >= 0) MEMOPT_RETURN_IF_ERROR(RequireFloat(ctx, a.residual, "residual"));
  const DeviceTensor& data = ctx.input(a.data);
  const int64_t n = data.numel();
  const bool random = a.random();
  const bool mask_wanted = ctx.output_wanted(1);
  const DropoutMask mask = KernelMask(a.mask);

  // Output 1: allocated first so the kernel can write it along with output 0.
  if (mask_wanted) {
    switch (mask) {
      case DropoutMask::kNone:
        break;
      case DropoutMask::kBool:
        MEMOPT_RETURN_IF_ERROR(ctx.AllocateOutput(1, DataType::kBool, data.shape()));
        break;
      case DropoutMask::kData:
        MEMOPT_RETURN_IF_ERROR(ctx.AllocateOutput(1, data.dtype(), data.shape()));
        break;
      case DropoutMask::kBitmask:
        MEMOPT_RETURN_IF_ERROR(ctx.AllocateOutput(1, DataType::kUint32, {(n + 31) / 32}));
        break;
    }
  }
  // What the kernel writes as the mask: the inference bool/bit masks are constant fills.
  DropoutMask kernel_mask = DropoutMask::kNone;
  if (mask_wanted && (random || mask == DropoutMask::kData)) kernel_mask = mask;

  // Output 0: inference without bias or residual is the data itself; the block is shared, as
  // Identity shares it (tensors are never written after their kernel).
  if (!random && a.bias < 0 && a.residual < 0 && kernel_mask == DropoutMask::kNone) {
    ctx.outputs[0] = data;
  } else {
    MEMOPT_RETURN_IF_ERROR(ctx.AllocateOutput(0, data.dtype(), data.shape()));
    DropoutParams p;
    p.x = data.raw();
    if (a.bias >= 0) {
      p.bias = ctx.input(a.bias).raw();
      p.nbias = ctx.input(a.bias).numel();
    }
    if (a.residual >= 0) p.residual = ctx.input(a.residual).raw();
    p.y = ctx.outputs[0].raw();
    p.mask = kernel_mask == DropoutMask::kNone ? nullptr : ctx.outputs[1].raw();
    p.n = n;
    p.random = random;
    if (random) {
      p.seed = NodeDropoutSeed(*ctx.node, ctx.graph, ctx.run_seed);
      p.keep_probability = DropoutKeepProbability(a.ratio);
      p.scale = ScaleFor(a.ratio);
    }
    MEMOPT_RETURN_IF_ERROR(Launched(ctx, LaunchDropout(*ToElemType(data.dtype()), kernel_mask, p, ctx.stream())));
  }

  if (mask_wanted && kernel_mask == DropoutMask::kNone) {
    // Inference: every element kept; bit masks set their padding bits too, like the CPU.
    DeviceTensor& m = ctx.outputs[1];
    if (m.bytes() > 0) {
      const int byte = mask == DropoutMask::kBool ? 1 : 0xFF;
      MEMOPT_RETURN_IF_ERROR(
          MemsetStatus(ctx, cudaMemsetAsync(m.raw(), byte, static_cast<size_t>(m.bytes()), ctx.stream())));
    }
  }
  return Status::Ok();
}

Status DropoutBackward(CudaKernelContext& ctx) {
  MEMOPT_RETURN_IF_ERROR(RequireFloat(ctx, 0, "dy"));
  auto plan = dropout::DecodeDropoutGrad(*ctx.node, InputMetas(ctx).list(), Scalars(ctx));
  if (!plan.ok()) return ctx.Error(plan.status().message());
  const DeviceTensor& dy = ctx.input(0);
  MEMOPT_RETURN_IF_ERROR(ctx.AllocateOutput(0, dy.dtype(), dy.shape()));
  return Launched(ctx, LaunchDropoutGrad(*ToElemType(dy.dtype()), plan->bitmask, dy.raw(), ctx.input(1).raw(),
                                         ScaleFor(plan->ratio), ctx.outputs[0].raw(), dy.numel(), ctx.stream()));
}

}  // namespace

MEMOPT_CUDA_OPS(dropout, dropout) {
  r.Register("", "Dropout", DropoutForward);
  for (const char* op : {"BitmaskDropout", "BiasDropout", "BitmaskBiasDropout"}) {
    r.Register(kMs, op, DropoutForward);
  }
  r.Register(kMs, "DropoutGrad", DropoutBackward);
  r.Register(kMs, "BitmaskDropoutGrad", DropoutBackward);
}

}  // namespace memopt::cuda
