// The Dropout family on the GPU: ONNX Dropout (every opset), com.microsoft BitmaskDropout,
// BiasDropout, BitmaskBiasDropout, DropoutGrad and BitmaskDropoutGrad, with the semantics, seeds
// and masks of the CPU reference (exec/kernels/training_dropout.cc): the seed comes from the same
// function (exec/dropout_seed.h) and the kernels draw the same Philox words, so the bool and
// bit-packed masks are bit-identical to the CPU's.
//
// The scalar inputs (ratio, training_mode) are read on the host: integer/bool ones from their host
// mirror, a float ratio by a small download (which waits for the stream). The ratio is read only
// when training_mode says it is used.
#include <string>
#include <vector>

#include "cuda_kernel.h"
#include "dropout_launch.h"
#include "elem_type.h"
#include "exec/dropout_seed.h"
#include "exec/tensor.h"
#include "kernel_util.h"

namespace memopt::cuda {
namespace {

constexpr const char* kMs = "com.microsoft";

/// Element 0 of scalar input i read as the CPU's OptionalScalar does; `def` when absent or empty.
Expected<double> OptionalScalar(const CudaKernelContext& ctx, int i, double def) {
  if (!ctx.has_input(i) || ctx.input(i).numel() == 0) return def;
  const DeviceTensor& t = ctx.input(i);
  const Tensor* host = t.host_mirror();
  Tensor downloaded;
  if (host == nullptr) {
    MEMOPT_ASSIGN_OR_RETURN(downloaded, t.Download());
    host = &downloaded;
  }
  if (host->dtype() == DataType::kBool) return host->data<uint8_t>()[0] != 0 ? 1.0 : 0.0;
  return host->GetAsDouble(0);
}

Expected<bool> OptionalBool(const CudaKernelContext& ctx, int i, bool def) {
  MEMOPT_ASSIGN_OR_RETURN(double v, OptionalScalar(ctx, i, def ? 1.0 : 0.0));
  return v != 0.0;
}

/// Ratio input i (default 0.5), in [0, 1].
Expected<float> ReadRatio(const CudaKernelContext& ctx, int i) {
  MEMOPT_ASSIGN_OR_RETURN(double ratio, OptionalScalar(ctx, i, 0.5));
  if (!(ratio >= 0.0 && ratio <= 1.0)) {
    return ctx.Error("dropout ratio " + std::to_string(ratio) + " is outside [0, 1]");
  }
  return static_cast<float>(ratio);
}

/// The CPU's DropoutScale of the float ratio, rounded to float like its `static_cast<C>`.
float ScaleFor(float ratio) {
  const double r = ratio;
  return static_cast<float>(r >= 1.0 ? 0.0 : 1.0 / (1.0 - r));
}

Status MemsetStatus(const CudaKernelContext& ctx, cudaError_t err) {
  if (err == cudaSuccess) return Status::Ok();
  return ctx.Error(std::string("cudaMemsetAsync failed: ") + cudaGetErrorName(err));
}

bool OutputWanted(const CudaKernelContext& ctx, int i) {
  return i < static_cast<int>(ctx.node->outputs.size()) && ctx.node->outputs[i] != kNone;
}

struct DropoutArgs {
  int data = 0;
  int bias = -1;      ///< input index of the bias (BiasDropout) or -1
  int residual = -1;  ///< input index of the residual (BiasDropout) or -1
  bool training = false;
  float ratio = 0.5f;
  DropoutMask mask = DropoutMask::kBool;
};

Status DropoutCore(CudaKernelContext& ctx, const DropoutArgs& a) {
  MEMOPT_RETURN_IF_ERROR(RequireFloat(ctx, a.data, "data"));
  const DeviceTensor& data = ctx.input(a.data);
  const int64_t n = data.numel();
  const bool has_bias = a.bias >= 0 && ctx.has_input(a.bias);
  const bool has_residual = a.residual >= 0 && ctx.has_input(a.residual);
  if (has_bias) {
    MEMOPT_RETURN_IF_ERROR(RequireFloat(ctx, a.bias, "bias"));
    const DeviceTensor& bias = ctx.input(a.bias);
    if (bias.numel() == 0 || n % bias.numel() != 0 || bias.dtype() != data.dtype()) {
      return ctx.Error("bias " + bias.Describe() + " does not broadcast onto data " + data.Describe());
    }
  }
  if (has_residual) {
    MEMOPT_RETURN_IF_ERROR(RequireFloat(ctx, a.residual, "residual"));
    const DeviceTensor& res = ctx.input(a.residual);
    if (res.numel() != n || res.dtype() != data.dtype()) {
      return ctx.Error("residual " + res.Describe() + " must have the shape and type of data " + data.Describe());
    }
  }
  const float ratio = a.training ? a.ratio : 0.0f;
  const bool random = ratio > 0.0f;
  const bool mask_wanted = OutputWanted(ctx, 1);

  // Output 1: allocated first so the kernel can write it along with output 0.
  if (mask_wanted) {
    switch (a.mask) {
      case DropoutMask::kNone: break;
      case DropoutMask::kBool: MEMOPT_RETURN_IF_ERROR(ctx.AllocateOutput(1, DataType::kBool, data.shape())); break;
      case DropoutMask::kData: MEMOPT_RETURN_IF_ERROR(ctx.AllocateOutput(1, data.dtype(), data.shape())); break;
      case DropoutMask::kBitmask:
        MEMOPT_RETURN_IF_ERROR(ctx.AllocateOutput(1, DataType::kUint32, {(n + 31) / 32}));
        break;
    }
  }
  // What the kernel writes as the mask: the inference bool/bit masks are constant fills.
  DropoutMask kernel_mask = DropoutMask::kNone;
  if (mask_wanted && (random || a.mask == DropoutMask::kData)) kernel_mask = a.mask;

  // Output 0: inference without bias or residual is the data itself; the block is shared, as
  // Identity shares it (tensors are never written after their kernel).
  if (!random && !has_bias && !has_residual && kernel_mask == DropoutMask::kNone) {
    ctx.outputs[0] = data;
  } else {
    MEMOPT_RETURN_IF_ERROR(ctx.AllocateOutput(0, data.dtype(), data.shape()));
    DropoutParams p;
    p.x = data.raw();
    if (has_bias) {
      p.bias = ctx.input(a.bias).raw();
      p.nbias = ctx.input(a.bias).numel();
    }
    if (has_residual) p.residual = ctx.input(a.residual).raw();
    p.y = ctx.outputs[0].raw();
    p.mask = kernel_mask == DropoutMask::kNone ? nullptr : ctx.outputs[1].raw();
    p.n = n;
    p.random = random;
    if (random) {
      p.seed = NodeDropoutSeed(*ctx.node, ctx.run_seed);
      p.keep_probability = DropoutKeepProbability(ratio);
      p.scale = ScaleFor(ratio);
    }
    MEMOPT_RETURN_IF_ERROR(Launched(ctx, LaunchDropout(*ToElemType(data.dtype()), kernel_mask, p, ctx.stream())));
  }

  if (mask_wanted && kernel_mask == DropoutMask::kNone) {
    // Inference: every element kept; bit masks set their padding bits too, like the CPU.
    DeviceTensor& m = ctx.outputs[1];
    if (m.bytes() > 0) {
      const int byte = a.mask == DropoutMask::kBool ? 1 : 0xFF;
      MEMOPT_RETURN_IF_ERROR(
          MemsetStatus(ctx, cudaMemsetAsync(m.raw(), byte, static_cast<size_t>(m.bytes()), ctx.stream())));
    }
  }
  return Status::Ok();
}

// ONNX Dropout. Opset 1/6: attrs ratio, is_test (0 = training), mask of the data type. Opset
// 7-11: inference only (mask of the data type before 10, bool from 10). Opset 12+: inputs ratio
// and training_mode; bool mask.
Status OnnxDropout(CudaKernelContext& ctx) {
  const int version = ctx.node->since_version == 0 ? 13 : ctx.node->since_version;
  DropoutArgs a;
  if (version >= 12) {
    MEMOPT_ASSIGN_OR_RETURN(a.training, OptionalBool(ctx, 2, false));
    if (a.training) {
      MEMOPT_ASSIGN_OR_RETURN(a.ratio, ReadRatio(ctx, 1));
    }
  } else {
    a.ratio = ctx.node->GetFloat("ratio", 0.5f);
    a.training = version < 7 && ctx.node->GetInt("is_test", 0) == 0;
    a.mask = version < 10 ? DropoutMask::kData : DropoutMask::kBool;
    if (a.training && !(a.ratio >= 0.0f && a.ratio <= 1.0f)) {
      return ctx.Error("dropout ratio " + std::to_string(a.ratio) + " is outside [0, 1]");
    }
  }
  return DropoutCore(ctx, a);
}

/// BitmaskDropout(data, ratio?, training_mode?) and, with `bias`, BiasDropout /
/// BitmaskBiasDropout(data, bias, residual?, ratio?, training_mode?).
Status MsDropout(CudaKernelContext& ctx, bool bias, DropoutMask mask) {
  DropoutArgs a;
  a.mask = mask;
  const int ratio_index = bias ? 3 : 1;
  if (bias) {
    MEMOPT_RETURN_IF_ERROR(RequireInput(ctx, 1, "bias"));
    a.bias = 1;
    a.residual = 2;
  }
  MEMOPT_ASSIGN_OR_RETURN(a.training, OptionalBool(ctx, ratio_index + 1, false));
  if (a.training) {
    MEMOPT_ASSIGN_OR_RETURN(a.ratio, ReadRatio(ctx, ratio_index));
  }
  return DropoutCore(ctx, a);
}

/// DropoutGrad(dy, mask:bool, ratio?, training_mode?) and BitmaskDropoutGrad(dy, mask:uint32, ...):
/// dx = mask ? dy / (1 - ratio) : 0, the scale 1 when training_mode is false (its default is true
/// for DropoutGrad, false for BitmaskDropoutGrad, as on the CPU).
Status DropoutGradImpl(CudaKernelContext& ctx, bool bitmask) {
  MEMOPT_RETURN_IF_ERROR(RequireFloat(ctx, 0, "dy"));
  MEMOPT_RETURN_IF_ERROR(RequireInput(ctx, 1, "mask"));
  const DeviceTensor& dy = ctx.input(0);
  const DeviceTensor& mask = ctx.input(1);
  const int64_t n = dy.numel();
  if (bitmask) {
    if (mask.dtype() != DataType::kUint32 || mask.numel() != (n + 31) / 32) {
      return ctx.Error("mask " + mask.Describe() + " must be uint32 with ceil(" + std::to_string(n) +
                       "/32) elements for dy " + dy.Describe());
    }
  } else if (mask.dtype() != DataType::kBool || mask.numel() != n) {
    return ctx.Error("mask " + mask.Describe() + " must be bool with the shape of dy " + dy.Describe());
  }
  MEMOPT_ASSIGN_OR_RETURN(const bool training, OptionalBool(ctx, 3, !bitmask));
  float ratio = 0.0f;
  if (training) {
    MEMOPT_ASSIGN_OR_RETURN(ratio, ReadRatio(ctx, 2));
  }
  MEMOPT_RETURN_IF_ERROR(ctx.AllocateOutput(0, dy.dtype(), dy.shape()));
  return Launched(ctx, LaunchDropoutGrad(*ToElemType(dy.dtype()), bitmask, dy.raw(), mask.raw(), ScaleFor(ratio),
                                         ctx.outputs[0].raw(), n, ctx.stream()));
}

}  // namespace

void RegisterDropoutKernels(CudaKernelRegistry& r) {
  r.Register("", "Dropout", OnnxDropout);
  r.Register(kMs, "BitmaskDropout",
             [](CudaKernelContext& ctx) { return MsDropout(ctx, false, DropoutMask::kBitmask); });
  r.Register(kMs, "BiasDropout", [](CudaKernelContext& ctx) { return MsDropout(ctx, true, DropoutMask::kBool); });
  r.Register(kMs, "BitmaskBiasDropout",
             [](CudaKernelContext& ctx) { return MsDropout(ctx, true, DropoutMask::kBitmask); });
  r.Register(kMs, "DropoutGrad", [](CudaKernelContext& ctx) { return DropoutGradImpl(ctx, false); });
  r.Register(kMs, "BitmaskDropoutGrad", [](CudaKernelContext& ctx) { return DropoutGradImpl(ctx, true); });
}

}  // namespace memopt::cuda
