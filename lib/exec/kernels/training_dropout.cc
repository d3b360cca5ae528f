// The Dropout family (ort_training_ops.md 2.6-2.8, 3.14, 3.15): ONNX Dropout (every opset),
// com.microsoft BitmaskDropout, BiasDropout, BitmaskBiasDropout, DropoutGrad, BitmaskDropoutGrad.
// Masks come from the counter-based Philox generator of exec/philox.h keyed by the node's seed
// (KernelContext::run_seed mixed with the output name when there is no `seed` attribute), so a
// node run twice with the same inputs and seed, or its recompute clone, draws the same mask.
//
// Semantics: output = (data [+ bias]) * keep / (1 - ratio) [+ residual]; bool mask true = keep;
// bit-packed mask: bit i%32 of uint32 word i/32, 1 = keep, padding bits 0 in training mode.
// Inference (training_mode false/absent, ratio 0, opset 7-11 Dropout, is_test=1): output = data
// [+ bias] [+ residual], every mask element true / every mask word 0xFFFFFFFF.
// DropoutGrad: dx = mask ? dy / (1 - ratio) : 0 (ratio default 0.5). Deviation from ORT: when the
// optional training_mode input is present and false, the scale is 1 (the forward did not scale);
// ORT's DropoutGrad ignores training_mode (BitmaskDropoutGrad already honours it).
#include <optional>
#include <vector>

#include "exec/dropout_seed.h"
#include "exec/kernels/kernel_util.h"
#include "exec/kernels/training_util.h"

namespace memopt::training {
namespace {

enum class MaskKind { kBool, kData, kBitmask };

struct DropoutArgs {
  int data = 0;
  int bias = -1;      ///< input index of the bias (BiasDropout) or -1
  int residual = -1;  ///< input index of the residual (BiasDropout) or -1
  bool training = false;
  float ratio = 0.5f;
  MaskKind mask_kind = MaskKind::kBool;
};

Status DropoutCore(KernelContext& ctx, const DropoutArgs& a) {
  MEMOPT_RETURN_IF_ERROR(RequireFloatInput(ctx, a.data, "data"));
  const Tensor& data = ctx.input(a.data);
  const int64_t n = data.numel();
  const bool has_bias = a.bias >= 0 && ctx.has_input(a.bias);
  const bool has_residual = a.residual >= 0 && ctx.has_input(a.residual);
  if (has_bias) {
    MEMOPT_RETURN_IF_ERROR(RequireFloatInput(ctx, a.bias, "bias"));
    const int64_t nb = ctx.input(a.bias).numel();
    if (nb == 0 || n % nb != 0) {
      return ctx.Error("bias " + ctx.input(a.bias).Describe() + " does not broadcast onto data " + data.Describe());
    }
  }
  if (has_residual) {
    MEMOPT_RETURN_IF_ERROR(RequireFloatInput(ctx, a.residual, "residual"));
    if (ctx.input(a.residual).numel() != n) {
      return ctx.Error("residual " + ctx.input(a.residual).Describe() + " must have the shape of data " +
                       data.Describe());
    }
  }
  const float ratio = a.training ? a.ratio : 0.0f;
  const bool random = ratio > 0.0f;
  std::vector<uint8_t> keep;
  if (random) {
    keep.resize(static_cast<size_t>(n));
    FillDropoutMask(NodeDropoutSeed(*ctx.node, ctx.run_seed), ratio, n, keep.data());
  }

  // Output 0.
  if (!random && !has_bias && !has_residual) {
    ctx.outputs[0] = data.Clone();
  } else {
    ctx.outputs[0] = Tensor(data.dtype(), data.shape());
    MEMOPT_RETURN_IF_ERROR(DispatchCompute(ctx, data.dtype(), [&]<typename C>() -> Status {
      FloatIn<C> x(data);
      FloatOut<C> y(ctx.outputs[0]);
      const C scale = static_cast<C>(DropoutScale(ratio));
      std::optional<FloatIn<C>> bias, res;
      if (has_bias) bias.emplace(ctx.input(a.bias));
      if (has_residual) res.emplace(ctx.input(a.residual));
      const int64_t nb = has_bias ? ctx.input(a.bias).numel() : 1;
      ParallelFor(n, 4, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
          C v = x[i];
          if (has_bias) v += (*bias)[i % nb];
          if (random) v = keep[static_cast<size_t>(i)] ? v * scale : C(0);
          if (has_residual) v += (*res)[i];
          y[i] = v;
        }
      });
      return Status::Ok();
    }));
  }

  // Output 1: the mask.
  if (!ctx.output_wanted(1)) return Status::Ok();
  switch (a.mask_kind) {
    case MaskKind::kBool: {
      ctx.outputs[1] = Tensor(DataType::kBool, data.shape());
      uint8_t* m = ctx.outputs[1].data<uint8_t>();
      for (int64_t i = 0; i < n; ++i) m[i] = random ? keep[i] : 1;
      break;
    }
    case MaskKind::kData: {
      ctx.outputs[1] = Tensor(data.dtype(), data.shape());
      for (int64_t i = 0; i < n; ++i) ctx.outputs[1].SetFromDouble(i, random ? keep[i] : 1.0);
      break;
    }
    case MaskKind::kBitmask: {
      const int64_t words = (n + 31) / 32;
      ctx.outputs[1] = Tensor(DataType::kUint32, {words});
      uint32_t* m = ctx.outputs[1].data<uint32_t>();
      for (int64_t w = 0; w < words; ++w) m[w] = random ? 0u : 0xFFFFFFFFu;
      if (random) {
        for (int64_t i = 0; i < n; ++i) {
          if (keep[i]) m[i / 32] |= 1u << (i % 32);
        }
      }
      break;
    }
  }
  return Status::Ok();
}

bool OptionalBool(const KernelContext& ctx, int i, bool def) { return OptionalScalar(ctx, i, def ? 1.0 : 0.0) != 0.0; }

// ONNX Dropout. Opset 1/6: attrs ratio, is_test (0 = training), mask of the data type.
// Opset 7/10: inference only (mask of the data type in 7, bool from 10). Opset 12+: inputs ratio,
// training_mode; bool mask.
Expected<DropoutArgs> OnnxDropoutArgs(const KernelContext& ctx) {
  const int version = ctx.node->since_version == 0 ? 13 : ctx.node->since_version;
  DropoutArgs a;
  if (version >= 12) {
    MEMOPT_ASSIGN_OR_RETURN(a.ratio, ReadDropoutRatio(ctx, 1));
    a.training = OptionalBool(ctx, 2, false);
  } else {
    a.ratio = ctx.node->GetFloat("ratio", 0.5f);
    a.training = version < 7 && ctx.node->GetInt("is_test", 0) == 0;
    a.mask_kind = version < 10 ? MaskKind::kData : MaskKind::kBool;
  }
  if (a.training && !(a.ratio >= 0.0f && a.ratio <= 1.0f)) {
    return ctx.Error("dropout ratio " + std::to_string(a.ratio) + " is outside [0, 1]");
  }
  return a;
}

Status OnnxDropoutKernel(KernelContext& ctx) {
  MEMOPT_ASSIGN_OR_RETURN(DropoutArgs a, OnnxDropoutArgs(ctx));
  return DropoutCore(ctx, a);
}

// BitmaskDropout(data, ratio?, training_mode?) -> output, mask:uint32?
Status BitmaskDropoutKernel(KernelContext& ctx) {
  DropoutArgs a;
  MEMOPT_ASSIGN_OR_RETURN(a.ratio, ReadDropoutRatio(ctx, 1));
  a.training = OptionalBool(ctx, 2, false);
  a.mask_kind = MaskKind::kBitmask;
  return DropoutCore(ctx, a);
}

// BiasDropout / BitmaskBiasDropout(data, bias, residual?, ratio?, training_mode?) -> output, mask?
Status BiasDropoutImpl(KernelContext& ctx, MaskKind kind) {
  MEMOPT_RETURN_IF_ERROR(RequireInput(ctx, 1, "bias"));
  DropoutArgs a;
  a.bias = 1;
  a.residual = 2;
  MEMOPT_ASSIGN_OR_RETURN(a.ratio, ReadDropoutRatio(ctx, 3));
  a.training = OptionalBool(ctx, 4, false);
  a.mask_kind = kind;
  return DropoutCore(ctx, a);
}
Status BiasDropoutKernel(KernelContext& ctx) { return BiasDropoutImpl(ctx, MaskKind::kBool); }
Status BitmaskBiasDropoutKernel(KernelContext& ctx) { return BiasDropoutImpl(ctx, MaskKind::kBitmask); }

// DropoutGrad(dy, mask:bool, ratio?, training_mode?) and BitmaskDropoutGrad(dy, mask:uint32, ...).
Status DropoutGradImpl(KernelContext& ctx, bool bitmask) {
  MEMOPT_RETURN_IF_ERROR(RequireFloatInput(ctx, 0, "dy"));
  MEMOPT_RETURN_IF_ERROR(RequireInput(ctx, 1, "mask"));
  const Tensor& dy = ctx.input(0);
  const Tensor& mask = ctx.input(1);
  const int64_t n = dy.numel();
  if (bitmask) {
    if (mask.dtype() != DataType::kUint32 || mask.numel() != (n + 31) / 32) {
      return ctx.Error("mask " + mask.Describe() + " must be uint32 with ceil(" + std::to_string(n) +
                       "/32) elements for dy " + dy.Describe());
    }
  } else if (mask.dtype() != DataType::kBool || mask.numel() != n) {
    return ctx.Error("mask " + mask.Describe() + " must be bool with the shape of dy " + dy.Describe());
  }
  MEMOPT_ASSIGN_OR_RETURN(float ratio, ReadDropoutRatio(ctx, 2));
  const bool training = OptionalBool(ctx, 3, !bitmask);
  if (!training) ratio = 0.0f;
  ctx.outputs[0] = Tensor(dy.dtype(), dy.shape());
  return DispatchCompute(ctx, dy.dtype(), [&]<typename C>() -> Status {
    FloatIn<C> g(dy);
    FloatOut<C> dx(ctx.outputs[0]);
    const C scale = static_cast<C>(DropoutScale(ratio));
    if (bitmask) {
      const uint32_t* m = mask.data<uint32_t>();
      for (int64_t i = 0; i < n; ++i) dx[i] = ((m[i / 32] >> (i % 32)) & 1u) ? g[i] * scale : C(0);
    } else {
      const uint8_t* m = mask.data<uint8_t>();
      for (int64_t i = 0; i < n; ++i) dx[i] = m[i] ? g[i] * scale : C(0);
    }
    return Status::Ok();
  });
}
Status DropoutGradKernel(KernelContext& ctx) { return DropoutGradImpl(ctx, false); }
Status BitmaskDropoutGradKernel(KernelContext& ctx) { return DropoutGradImpl(ctx, true); }

bool OnnxDropoutIsRandom(const KernelContext& ctx) {
  auto a = OnnxDropoutArgs(ctx);
  return a.ok() && a->training && a->ratio > 0.0f;
}
/// Ops with (ratio, training_mode) at input positions (r, r+1).
template <int kRatioIndex>
bool MsDropoutIsRandom(const KernelContext& ctx) {
  return OptionalBool(ctx, kRatioIndex + 1, false) && OptionalScalar(ctx, kRatioIndex, 0.5) > 0.0;
}

}  // namespace

void RegisterDropoutKernels(KernelRegistry& r) {
  const auto types = FloatTypes();
  r.Register("", "Dropout", OnnxDropoutKernel, types);
  r.Register(kMsDomain, "BitmaskDropout", BitmaskDropoutKernel, types);
  r.Register(kMsDomain, "BiasDropout", BiasDropoutKernel, types);
  r.Register(kMsDomain, "BitmaskBiasDropout", BitmaskBiasDropoutKernel, types);
  r.Register(kMsDomain, "DropoutGrad", DropoutGradKernel, types);
  r.Register(kMsDomain, "BitmaskDropoutGrad", BitmaskDropoutGradKernel, types);
  r.SetRandomPredicate("", "Dropout", OnnxDropoutIsRandom);
  r.SetRandomPredicate(kMsDomain, "BitmaskDropout", MsDropoutIsRandom<1>);
  r.SetRandomPredicate(kMsDomain, "BiasDropout", MsDropoutIsRandom<3>);
  r.SetRandomPredicate(kMsDomain, "BitmaskBiasDropout", MsDropoutIsRandom<3>);
}

}  // namespace memopt::training
