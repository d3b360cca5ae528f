// The CPU kernels of the Dropout family (dropout.cc has the op definitions and the decode they
// share with CUDA). Semantics: output = (data [+ bias]) * keep / (1 - ratio) [+ residual]; bool
// mask true = keep; bit-packed mask: bit i%32 of uint32 word i/32, 1 = keep, padding bits 0 in
// training mode. Inference (training_mode false/absent, ratio 0, opset 7-11 Dropout, is_test=1):
// output = data [+ bias] [+ residual], every mask element true / every mask word 0xFFFFFFFF.
// DropoutGrad: dx = mask ? dy / (1 - ratio) : 0; see DecodeDropoutGrad for training_mode.
#include <algorithm>
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
  const uint64_t seed = random ? DropoutSeed(ctx) : 0;
  const bool copy = !random && a.bias < 0 && a.residual < 0;
  // Outputs first (0, then the mask), then one pass over chunks: the mask drawn for the chunk
  // (exec/philox.h: element i's draw does not depend on the chunk), the data read, combined and
  // stored, so neither a mask of the whole tensor nor float copies of 16-bit tensors are held.
  ctx.outputs[0] = copy ? data.Clone() : Tensor(data.dtype(), data.shape());
  const bool want_mask = ctx.output_wanted(1);
  if (want_mask) {
    switch (a.mask) {
      case MaskKind::kBool:
        ctx.outputs[1] = Tensor(DataType::kBool, data.shape());
        break;
      case MaskKind::kData:
        ctx.outputs[1] = Tensor(data.dtype(), data.shape());
        break;
      case MaskKind::kBitmask:
        ctx.outputs[1] = Tensor(DataType::kUint32, {(n + 31) / 32});
        break;
    }
  }
  Tensor& y = ctx.outputs[0];
  return DispatchCompute(ctx, data.dtype(), [&]<typename C>() -> Status {
    const C scale = static_cast<C>(DropoutScale(a.ratio));
    const Tensor* bias = a.bias >= 0 ? &ctx.input(a.bias) : nullptr;
    std::vector<C> bias_values(bias != nullptr ? static_cast<size_t>(bias->numel()) : 0);
    if (bias != nullptr) ConvertRange(*bias, 0, bias->numel(), bias_values.data());
    const int64_t nb = bias != nullptr ? bias->numel() : 1;
    const Tensor* res = a.residual >= 0 ? &ctx.input(a.residual) : nullptr;
    ForEachChunk<C>(n, 8, [&](int64_t first, int64_t count, ChunkBuffers<C>& buf) {
      uint8_t* keep = buf.Bytes(static_cast<size_t>(count));
      if (random) {
        FillDropoutMaskRange(seed, a.ratio, first, count, keep);
      } else {
        std::fill(keep, keep + count, uint8_t{1});
      }
      if (!copy) {
        const C* x = ReadRange(data, first, count, buf, 0);
        const C* r = res != nullptr ? ReadRange(*res, first, count, buf, 1) : nullptr;
        C* out = WriteRange(y, first, count, buf, 2);
        for (int64_t i = 0; i < count; ++i) {
          C v = x[i];
          if (bias != nullptr) v += bias_values[static_cast<size_t>((first + i) % nb)];
          if (random) v = keep[i] ? v * scale : C(0);
          if (r != nullptr) v += r[i];
          out[i] = v;
        }
        CommitRange(out, count, y, first);
      }
      if (!want_mask) return;
      switch (a.mask) {
        case MaskKind::kBool:
          std::copy(keep, keep + count, ctx.outputs[1].data<uint8_t>() + first);
          break;
        case MaskKind::kData: {
          C* m = buf.Get(3, count);
          for (int64_t i = 0; i < count; ++i) m[i] = keep[i] ? C(1) : C(0);
          StoreRange(m, count, ctx.outputs[1], first);
          break;
        }
        case MaskKind::kBitmask: {
          // first is a multiple of 32 (kChunkElements), so the chunk's words are its own.
          uint32_t* words = ctx.outputs[1].data<uint32_t>() + first / 32;
          for (int64_t w = 0; w < (count + 31) / 32; ++w) {
            uint32_t bits = 0;
            for (int64_t j = 0; j < 32 && w * 32 + j < count; ++j) bits |= uint32_t{keep[w * 32 + j]} << j;
            words[w] = random ? bits : 0xFFFFFFFFu;
          }
          break;
        }
      }
    });
    return Status::Ok();
  });
}

Status DropoutGradCpu(KernelContext& ctx) {
  MEMOPT_RETURN_IF_ERROR(RequireFloatInput(ctx, 0, "dy"));
  auto plan = DecodeDropoutGrad(*ctx.node, ctx.inputs, Scalars(ctx));
  if (!plan.ok()) return ctx.Error(plan.status().message());
  const Tensor& dy = ctx.input(0);
  const Tensor& mask = ctx.input(1);
  const int64_t n = dy.numel();
  ctx.outputs[0] = Tensor(dy.dtype(), dy.shape());
  Tensor& dx = ctx.outputs[0];
  return DispatchCompute(ctx, dy.dtype(), [&]<typename C>() -> Status {
    const C scale = static_cast<C>(DropoutScale(plan->ratio));
    ForEachChunk<C>(n, 4, [&](int64_t first, int64_t count, ChunkBuffers<C>& buf) {
      const C* g = ReadRange(dy, first, count, buf, 0);
      C* out = WriteRange(dx, first, count, buf, 1);
      if (plan->bitmask) {
        const uint32_t* m = mask.data<uint32_t>();
        for (int64_t i = 0; i < count; ++i) {
          const int64_t e = first + i;
          out[i] = ((m[e / 32] >> (e % 32)) & 1u) ? g[i] * scale : C(0);
        }
      } else {
        const uint8_t* m = mask.data<uint8_t>() + first;
        for (int64_t i = 0; i < count; ++i) out[i] = m[i] ? g[i] * scale : C(0);
      }
      CommitRange(out, count, dx, first);
    });
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
