// The CPU kernels of the Dropout family (dropout.cc has the op definitions and the decode they
// share with CUDA). Semantics: output = (data [+ bias]) * keep / (1 - ratio) [+ residual]; bool
// mask true = keep; bit-packed mask: bit i%32 of uint32 word i/32, 1 = keep, padding bits 0 in
// training mode. Inference (training_mode false/absent, ratio 0, opset 7-11 Dropout, is_test=1):
// output = data [+ bias] [+ residual], every mask element true / every mask word 0xFFFFFFFF.
// DropoutGrad: dx = mask ? dy / (1 - ratio) : 0; see DecodeDropoutGrad for training_mode.
#include <optional>
#include <vector>

#include "exec/kernels/kernel_util.h"
#include "exec/kernels/training_util.h"
#include "ir/op_registry.h"
#include "ops/dropout/dropout.h"

namespace memopt::dropout {
namespace {

using namespace training;

/// The decode's scalar reader: the CPU kernels' OptionalScalar.
ScalarReader Scalars(const KernelContext& ctx) {
  return [&ctx](int i, double def) -> Expected<double> { return training::OptionalScalar(ctx, i, def); };
}

}  // namespace

Status DropoutCpu(KernelContext& ctx) {
  MEMOPT_RETURN_IF_ERROR(RequireFloatInput(ctx, 0, "data"));
  auto plan = DecodeDropout(*ctx.node, ctx.inputs, Scalars(ctx));
  if (!plan.ok()) return ctx.Error(plan.status().message());
  const DropoutPlan& a = *plan;
  if (a.bias >= 0) MEMOPT_RETURN_IF_ERROR(RequireFloatInput(ctx, a.bias, "bias"));
  if (a.residual >= 0) MEMOPT_RETURN_IF_ERROR(RequireFloatInput(ctx, a.residual, "residual"));
  const Tensor& data = ctx.input(a.data);
  const int64_t n = data.numel();
  const bool random = a.random();
  std::vector<uint8_t> keep;
  if (random) {
    keep.resize(static_cast<size_t>(n));
    FillDropoutMask(DropoutSeed(ctx), a.ratio, n, keep.data());
  }

  // Output 0.
  if (!random && a.bias < 0 && a.residual < 0) {
    ctx.outputs[0] = data.Clone();
  } else {
    ctx.outputs[0] = Tensor(data.dtype(), data.shape());
    MEMOPT_RETURN_IF_ERROR(DispatchCompute(ctx, data.dtype(), [&]<typename C>() -> Status {
      FloatIn<C> x(data);
      FloatOut<C> y(ctx.outputs[0]);
      const C scale = static_cast<C>(DropoutScale(a.ratio));
      std::optional<FloatIn<C>> bias, res;
      if (a.bias >= 0) bias.emplace(ctx.input(a.bias));
      if (a.residual >= 0) res.emplace(ctx.input(a.residual));
      const int64_t nb = a.bias >= 0 ? ctx.input(a.bias).numel() : 1;
      ParallelFor(n, 4, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
          C v = x[i];
          if (bias) v += (*bias)[i % nb];
          if (random) v = keep[static_cast<size_t>(i)] ? v * scale : C(0);
          if (res) v += (*res)[i];
          y[i] = v;
        }
      });
      return Status::Ok();
    }));
  }

  // Output 1: the mask.
  if (!ctx.output_wanted(1)) return Status::Ok();
  switch (a.mask) {
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

Status DropoutGradCpu(KernelContext& ctx) {
  MEMOPT_RETURN_IF_ERROR(RequireFloatInput(ctx, 0, "dy"));
  auto plan = DecodeDropoutGrad(*ctx.node, ctx.inputs, Scalars(ctx));
  if (!plan.ok()) return ctx.Error(plan.status().message());
  const Tensor& dy = ctx.input(0);
  const Tensor& mask = ctx.input(1);
  const int64_t n = dy.numel();
  ctx.outputs[0] = Tensor(dy.dtype(), dy.shape());
  return DispatchCompute(ctx, dy.dtype(), [&]<typename C>() -> Status {
    FloatIn<C> g(dy);
    FloatOut<C> dx(ctx.outputs[0]);
    const C scale = static_cast<C>(DropoutScale(plan->ratio));
    if (plan->bitmask) {
      const uint32_t* m = mask.data<uint32_t>();
      for (int64_t i = 0; i < n; ++i) dx[i] = ((m[i / 32] >> (i % 32)) & 1u) ? g[i] * scale : C(0);
    } else {
      const uint8_t* m = mask.data<uint8_t>();
      for (int64_t i = 0; i < n; ++i) dx[i] = m[i] ? g[i] * scale : C(0);
    }
    return Status::Ok();
  });
}

bool DropoutCpuIsRandom(const KernelContext& ctx) {
  auto plan = DecodeDropout(*ctx.node, ctx.inputs, Scalars(ctx));
  return plan.ok() && plan->random();
}

}  // namespace memopt::dropout

MEMOPT_OPS(dropout, dropout_cpu) {
  using namespace memopt;
  KernelInfo forward{dropout::DropoutCpu, training::FloatTypes()};
  forward.is_random = dropout::DropoutCpuIsRandom;
  ops.SetCpuKernel("", "Dropout", forward);
  for (const char* op : {"BiasDropout", "BitmaskDropout", "BitmaskBiasDropout"}) {
    ops.SetCpuKernel(kMicrosoftDomain, op, forward);
  }
  for (const char* op : {"DropoutGrad", "BitmaskDropoutGrad"}) {
    ops.SetCpuKernel(kMicrosoftDomain, op, {dropout::DropoutGradCpu, training::FloatTypes()});
  }
}
