// The CPU kernels of the layer normalisation gradients (layer_norm.cc has the op definitions and
// the decode they share with CUDA): LayerNormalizationGrad, SimplifiedLayerNormalizationGrad and
// InvertibleLayerNormalizationGrad (ort_training_ops.md 3.10-3.12). Rows are the 2-D view at
// `axis`; per-row and per-column sums accumulate in double, results are computed in the stash type
// (float, or double when X or the statistics are float64).
#include <algorithm>
#include <vector>

#include "exec/kernels/block_sum.h"
#include "exec/kernels/kernel_util.h"
#include "exec/kernels/training_util.h"
#include "ir/op_registry.h"
#include "ops/norm/layer_norm.h"

namespace memopt::norm {

using namespace training;

namespace {
/// Row chunks of the layer normalisation gradients (a constant: the order of the column sums
/// does not depend on the thread count).
constexpr int64_t kColumnSumChunks = 32;
}  // namespace

// One kernel for the three ops. Inputs by kind:
//   kFull:       dY, X, scale, mean, inv_std            -> dX, dScale, dBias
//   kSimplified: dY, X, scale, inv_std                  -> dX, dScale
//   kInvertible: dY, Y, scale, bias, inv_std            -> dX, dScale, dBias
// xhat = (x - mean)*inv (full), x*inv (simplified), (y - bias)/scale (invertible)
// dX = B - mean_row(B) - xhat*mean_row(B*xhat) with B = dY*scale*inv (no mean_row(B) term for
// simplified); dScale = sum_rows(dY*xhat); dBias = sum_rows(dY).
Status LayerNormalizationGradCpu(KernelContext& ctx) {
  MEMOPT_RETURN_IF_ERROR(RequireFloatInput(ctx, 0, "Y_grad"));
  auto plan = DecodeLayerNormGrad(*ctx.node, ctx.inputs);
  if (!plan.ok()) return ctx.Error(plan.status().message());
  const GradKind kind = plan->kind;
  const NormRows& v = plan->rows;
  const int inv_index = plan->inv_input;
  MEMOPT_RETURN_IF_ERROR(RequireFloatInput(ctx, 1, kind == GradKind::kInvertible ? "Y" : "X"));
  MEMOPT_RETURN_IF_ERROR(RequireFloatInput(ctx, 2, "scale"));
  if (plan->mean_input >= 0) MEMOPT_RETURN_IF_ERROR(RequireFloatInput(ctx, plan->mean_input, "mean"));
  if (plan->bias_input >= 0) MEMOPT_RETURN_IF_ERROR(RequireFloatInput(ctx, plan->bias_input, "bias"));
  MEMOPT_RETURN_IF_ERROR(RequireFloatInput(ctx, inv_index, "inv_std_dev"));
  const Tensor& dy = ctx.input(0);
  const Tensor& x = ctx.input(1);
  const Tensor& scale = ctx.input(2);
  const bool has_bias_grad = kind != GradKind::kSimplified;

  ctx.outputs[0] = Tensor::Uninitialized(x.dtype(), x.shape());  // every row is written
  if (ctx.output_wanted(1)) ctx.outputs[1] = Tensor(scale.dtype(), scale.shape());
  if (has_bias_grad && ctx.output_wanted(2)) ctx.outputs[2] = Tensor(scale.dtype(), scale.shape());
  const DataType compute = (x.dtype() == DataType::kDouble || ctx.input(inv_index).dtype() == DataType::kDouble)
                               ? DataType::kDouble
                               : DataType::kFloat;
  return DispatchCompute(ctx, compute, [&]<typename C>() -> Status {
    InView<C> s(scale);
    InView<C> inv(ctx.input(inv_index));
    std::vector<C> mean_buf;
    const C* mean = nullptr;
    if (kind == GradKind::kFull) {
      mean_buf.resize(static_cast<size_t>(v.rows));
      const Tensor& m = ctx.input(plan->mean_input);
      ConvertRange(m, 0, std::min(m.numel(), v.rows), mean_buf.data());
      mean = mean_buf.data();
    }
    std::vector<C> bias_buf;
    if (kind == GradKind::kInvertible) {
      bias_buf.resize(static_cast<size_t>(v.cols));
      const Tensor& b = ctx.input(plan->bias_input);
      ConvertRange(b, 0, std::min(b.numel(), v.cols), bias_buf.data());
    }
    Tensor& dx = ctx.outputs[0];
    // Rows of dY and X are read (and dX written) one at a time: 16-bit tensors are not copied to
    // float whole. xhat_at(xrow, r, c) is x-hat of row r, column c.
    auto xhat_at = [&](const C* xrow, int64_t r, int64_t c) -> C {
      const C xv = xrow[c];
      if (kind == GradKind::kFull) return (xv - mean[r]) * inv[r];
      if (kind == GradKind::kSimplified) return xv * inv[r];
      return (xv - bias_buf[static_cast<size_t>(c)]) / s[c];
    };
    // Fixed chunks of rows on the pool's threads: each row's dX, and the chunk's own partial
    // column sums of dScale and dBias while the row is in cache; the partials are added in chunk
    // order, so the bits do not depend on the thread count.
    const int64_t chunks = std::min<int64_t>(v.rows, kColumnSumChunks);
    const auto cols = static_cast<size_t>(v.cols);
    std::vector<double> part_scale(static_cast<size_t>(chunks) * cols, 0.0), part_bias(part_scale.size(), 0.0);
    ParallelFor(chunks, 16 * v.cols * std::max<int64_t>(1, v.rows / std::max<int64_t>(1, chunks)),
                [&](int64_t first, int64_t last) {
      ChunkBuffers<C> buf;
      for (int64_t k = first; k < last; ++k) {
        double* ds = part_scale.data() + static_cast<size_t>(k) * cols;
        double* db = part_bias.data() + static_cast<size_t>(k) * cols;
        for (int64_t r = v.rows * k / chunks; r < v.rows * (k + 1) / chunks; ++r) {
          const int64_t base = r * v.cols;
          const C* g = ReadRange(dy, base, v.cols, buf, 0);
          const C* xrow = ReadRange(x, base, v.cols, buf, 1);
          C* out = WriteRange(dx, base, cols, buf, 2);
          const C inv_r = inv[r];
          // Block sums (exec/kernels/block_sum.h): independent partials instead of one dependent
          // double chain per sum.
          const double sum_b = BlockSum<C>(v.cols, [&](int64_t c) { return g[c] * s[c] * inv_r; });
          const double sum_bx =
              BlockSum<C>(v.cols, [&](int64_t c) { return g[c] * s[c] * inv_r * xhat_at(xrow, r, c); });
          const C mean_b =
              kind == GradKind::kSimplified ? C(0) : static_cast<C>(sum_b / static_cast<double>(v.cols));
          const C mean_bx = static_cast<C>(sum_bx / static_cast<double>(v.cols));
          for (int64_t c = 0; c < v.cols; ++c) {
            const C xh = xhat_at(xrow, r, c);
            out[c] = g[c] * s[c] * inv_r - mean_b - xh * mean_bx;
            ds[c] += static_cast<double>(g[c]) * static_cast<double>(xh);
            db[c] += static_cast<double>(g[c]);
          }
          CommitRange(out, v.cols, dx, base);
        }
      }
    });
    std::vector<double> dscale(cols, 0.0), dbias(cols, 0.0);
    for (int64_t k = 0; k < chunks; ++k) {
      for (size_t c = 0; c < cols; ++c) {
        dscale[c] += part_scale[static_cast<size_t>(k) * cols + c];
        dbias[c] += part_bias[static_cast<size_t>(k) * cols + c];
      }
    }
    if (ctx.output_wanted(1)) StoreFromCompute(dscale.data(), ctx.outputs[1]);
    if (has_bias_grad && ctx.output_wanted(2)) StoreFromCompute(dbias.data(), ctx.outputs[2]);
    return Status::Ok();
  });
}

}  // namespace memopt::norm

MEMOPT_OPS(norm, layer_norm_grad_cpu) {
  using namespace memopt;
  for (const char* op :
       {"LayerNormalizationGrad", "SimplifiedLayerNormalizationGrad", "InvertibleLayerNormalizationGrad"}) {
    ops.SetCpuKernel(kMicrosoftDomain, op, norm::LayerNormalizationGradCpu, training::FloatTypes());
  }
}
