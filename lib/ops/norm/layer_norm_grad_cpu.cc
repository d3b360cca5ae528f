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
#include "ops/norm/layer_norm.h"

namespace memopt::norm {

using namespace training;

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
    FloatIn<C> g(dy);
    FloatIn<C> xin(x);
    FloatIn<C> s(scale);
    FloatIn<C> inv(ctx.input(inv_index));
    std::vector<C> mean_buf;
    const C* mean = nullptr;
    if (kind == GradKind::kFull) {
      mean_buf.resize(static_cast<size_t>(v.rows));
      ConvertToCompute(ctx.input(plan->mean_input), mean_buf.data());
      mean = mean_buf.data();
    }
    std::vector<C> bias_buf;
    if (kind == GradKind::kInvertible) {
      bias_buf.resize(static_cast<size_t>(v.cols));
      ConvertToCompute(ctx.input(plan->bias_input), bias_buf.data());
    }
    FloatOut<C> dx(ctx.outputs[0]);
    auto xhat_at = [&](int64_t r, int64_t c) -> C {
      const C xv = xin[r * v.cols + c];
      if (kind == GradKind::kFull) return (xv - mean[r]) * inv[r];
      if (kind == GradKind::kSimplified) return xv * inv[r];
      return (xv - bias_buf[static_cast<size_t>(c)]) / s[c];
    };
    // dX: rows in parallel.
    ParallelFor(v.rows, 12 * v.cols, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const int64_t base = r * v.cols;
        const C inv_r = inv[r];
        // Block sums (exec/kernels/block_sum.h): independent partials instead of one dependent
        // double chain per sum.
        const double sum_b = BlockSum<C>(v.cols, [&](int64_t c) { return g[base + c] * s[c] * inv_r; });
        const double sum_bx =
            BlockSum<C>(v.cols, [&](int64_t c) { return g[base + c] * s[c] * inv_r * xhat_at(r, c); });
        const C mean_b = kind == GradKind::kSimplified ? C(0) : static_cast<C>(sum_b / static_cast<double>(v.cols));
        const C mean_bx = static_cast<C>(sum_bx / static_cast<double>(v.cols));
        for (int64_t c = 0; c < v.cols; ++c) {
          dx[base + c] = g[base + c] * s[c] * inv_r - mean_b - xhat_at(r, c) * mean_bx;
        }
      }
    });
    // dScale / dBias: column blocks in parallel, rows in order, each block summing into its own
    // accumulators (blocks that shared a cache line of the results wrote it in turn every row).
    std::vector<double> dscale(static_cast<size_t>(v.cols), 0.0), dbias(static_cast<size_t>(v.cols), 0.0);
    ParallelFor(v.cols, 4 * v.rows, [&](int64_t begin, int64_t end) {
      std::vector<double> ds(static_cast<size_t>(end - begin), 0.0), db(ds.size(), 0.0);
      for (int64_t r = 0; r < v.rows; ++r) {
        for (int64_t c = begin; c < end; ++c) {
          const double gv = g[r * v.cols + c];
          ds[static_cast<size_t>(c - begin)] += gv * static_cast<double>(xhat_at(r, c));
          db[static_cast<size_t>(c - begin)] += gv;
        }
      }
      std::copy(ds.begin(), ds.end(), dscale.begin() + begin);
      std::copy(db.begin(), db.end(), dbias.begin() + begin);
    });
    if (ctx.output_wanted(1)) StoreFromCompute(dscale.data(), ctx.outputs[1]);
    if (has_bias_grad && ctx.output_wanted(2)) StoreFromCompute(dbias.data(), ctx.outputs[2]);
    return Status::Ok();
  });
}

}  // namespace memopt::norm
