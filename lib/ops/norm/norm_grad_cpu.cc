// BatchNormalizationGrad (ort_training_ops.md 3.13). The layer normalisation gradients are in
// ops/norm (layer_norm_grad_cpu.cc).
#include <cmath>
#include <vector>

#include "exec/kernels/block_sum.h"
#include "exec/kernels/kernel_util.h"
#include "exec/kernels/training_util.h"
#include "ir/op_registry.h"

namespace memopt::training {
namespace {

Status CheckPerColumn(const KernelContext& ctx, int i, const char* what, int64_t cols) {
  MEMOPT_RETURN_IF_ERROR(RequireFloatInput(ctx, i, what));
  if (ctx.input(i).numel() != cols) {
    return ctx.Error(std::string(what) + " " + ctx.input(i).Describe() + " must have " + std::to_string(cols) +
                     " elements (the normalised dims)");
  }
  return Status::Ok();
}

// BatchNormalizationGrad(dY, X, scale, saved_mean, saved_inv_std) -> dX, dScale, dBias (NCHW...).
// Per channel with M = N*spatial: dBias = sum dY; dScale = sum xhat*dY;
// dX = scale*inv/M * (M*dY - dBias - xhat*dScale), xhat = (x - mean)*inv.
Status BatchNormGradKernel(KernelContext& ctx) {
  MEMOPT_RETURN_IF_ERROR(RequireFloatInput(ctx, 0, "dY"));
  MEMOPT_RETURN_IF_ERROR(RequireFloatInput(ctx, 1, "X"));
  const Tensor& dy = ctx.input(0);
  const Tensor& x = ctx.input(1);
  if (dy.shape() != x.shape() || x.rank() < 2) {
    return ctx.Error("dY " + dy.Describe() + " and X " + x.Describe() + " must have the same shape of rank >= 2");
  }
  const int64_t n = x.dim(0), channels = x.dim(1), spatial = ShapeProduct(x.shape(), 2, x.rank());
  MEMOPT_RETURN_IF_ERROR(CheckPerColumn(ctx, 2, "scale", channels));
  MEMOPT_RETURN_IF_ERROR(CheckPerColumn(ctx, 3, "saved_mean", channels));
  MEMOPT_RETURN_IF_ERROR(CheckPerColumn(ctx, 4, "saved_inv_std", channels));
  const Tensor& scale = ctx.input(2);
  ctx.outputs[0] = Tensor::Uninitialized(x.dtype(), x.shape());  // every (image, channel) row is written
  if (ctx.output_wanted(1)) ctx.outputs[1] = Tensor(scale.dtype(), scale.shape());
  if (ctx.output_wanted(2)) ctx.outputs[2] = Tensor(scale.dtype(), scale.shape());
  return DispatchCompute(ctx, x.dtype(), [&]<typename C>() -> Status {
    InView<C> s(scale);
    InView<C> mean(ctx.input(3));
    InView<C> inv(ctx.input(4));
    Tensor& dx = ctx.outputs[0];
    const size_t row = static_cast<size_t>(spatial);
    std::vector<double> dscale(static_cast<size_t>(channels), 0.0), dbias(static_cast<size_t>(channels), 0.0);
    const double m = static_cast<double>(n * spatial);
    // Channels in parallel: the two sums over the channel's rows (block_sum.h), then dX from them
    // as dX = coef * (M dY - dBias - xhat dScale), with xhat = (x - mean) * inv.
    // (image, channel) rows of dY and X are read (and dX written) one at a time: 16-bit tensors
    // are not copied to float whole.
    ParallelFor(channels, 3 * n * spatial, [&](int64_t c0, int64_t c1) {
      ChunkBuffers<C> buf;
      for (int64_t c = c0; c < c1; ++c) {
        const C mu = mean[c], is = inv[c];
        double sum_g = 0, sum_gx = 0;
        for (int64_t b = 0; b < n; ++b) {
          const C* gp = ReadRange(dy, (b * channels + c) * spatial, spatial, buf, 0);
          const C* xp = ReadRange(x, (b * channels + c) * spatial, spatial, buf, 1);
          sum_g += SumOf(gp, spatial);
          sum_gx += BlockSum<C>(spatial, [gp, xp, mu](int64_t k) { return gp[k] * (xp[k] - mu); });
        }
        dbias[c] = sum_g;
        dscale[c] = sum_gx * static_cast<double>(is);
        const double coef = static_cast<double>(s[c]) * static_cast<double>(is) / m;
        const C a = static_cast<C>(coef * m), bx = static_cast<C>(-coef * dscale[c]), d = static_cast<C>(-coef * dbias[c]);
        for (int64_t b = 0; b < n; ++b) {
          const int64_t base = (b * channels + c) * spatial;
          const C* gp = ReadRange(dy, base, spatial, buf, 0);
          const C* xp = ReadRange(x, base, spatial, buf, 1);
          C* out = WriteRange(dx, base, row, buf, 2);
          for (int64_t k = 0; k < spatial; ++k) out[k] = a * gp[k] + bx * ((xp[k] - mu) * is) + d;
          CommitRange(out, spatial, dx, base);
        }
      }
    });
    if (ctx.output_wanted(1)) StoreFromCompute(dscale.data(), ctx.outputs[1]);
    if (ctx.output_wanted(2)) StoreFromCompute(dbias.data(), ctx.outputs[2]);
    return Status::Ok();
  });
}

}  // namespace

static void RegisterNormGradKernels(OpRegistry& r) {
  const auto types = FloatTypes();
  r.SetCpuKernel(kMsDomain, "BatchNormalizationGrad", BatchNormGradKernel, types);
}

}  // namespace memopt::training

MEMOPT_OPS(norm, norm_grad_cpu) {
  memopt::training::RegisterNormGradKernels(ops);
}
