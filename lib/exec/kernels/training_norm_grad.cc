// Normalisation gradients (ort_training_ops.md 3.10-3.13): LayerNormalizationGrad,
// SimplifiedLayerNormalizationGrad, InvertibleLayerNormalizationGrad, BatchNormalizationGrad.
// Rows are the 2-D view at `axis`; per-row and per-column sums accumulate in double, results are
// computed in the stash type (float, or double when X is float64).
#include <cmath>
#include <vector>

#include "exec/kernels/kernel_util.h"
#include "exec/kernels/training_util.h"

namespace memopt::training {
namespace {

struct RowView {
  int64_t rows = 0;
  int64_t cols = 0;
};

Expected<RowView> LayerNormRows(const KernelContext& ctx, const Tensor& x) {
  if (x.rank() == 0) return ctx.Error("X must have rank >= 1");
  MEMOPT_ASSIGN_OR_RETURN(int64_t axis, AxisOrError(ctx, ctx.node->GetInt("axis", -1), x.rank()));
  return RowView{ShapeProduct(x.shape(), 0, axis), ShapeProduct(x.shape(), axis, x.rank())};
}

Status CheckPerRow(const KernelContext& ctx, int i, const char* what, int64_t rows) {
  MEMOPT_RETURN_IF_ERROR(RequireFloatInput(ctx, i, what));
  if (ctx.input(i).numel() != rows) {
    return ctx.Error(std::string(what) + " " + ctx.input(i).Describe() + " must hold one value per row (" +
                     std::to_string(rows) + " rows)");
  }
  return Status::Ok();
}

Status CheckPerColumn(const KernelContext& ctx, int i, const char* what, int64_t cols) {
  MEMOPT_RETURN_IF_ERROR(RequireFloatInput(ctx, i, what));
  if (ctx.input(i).numel() != cols) {
    return ctx.Error(std::string(what) + " " + ctx.input(i).Describe() + " must have " + std::to_string(cols) +
                     " elements (the normalised dims)");
  }
  return Status::Ok();
}

enum class LnKind { kFull, kSimplified, kInvertible };

// Shared core. Inputs by kind:
//   kFull:       dY, X, scale, mean, inv_std            -> dX, dScale, dBias
//   kSimplified: dY, X, scale, inv_std                  -> dX, dScale
//   kInvertible: dY, Y, scale, bias, inv_std            -> dX, dScale, dBias
// xhat = (x - mean)*inv (full), x*inv (simplified), (y - bias)/scale (invertible)
// dX = B - mean_row(B) - xhat*mean_row(B*xhat) with B = dY*scale*inv (no mean_row(B) term for
// simplified); dScale = sum_rows(dY*xhat); dBias = sum_rows(dY).
Status LayerNormGradImpl(KernelContext& ctx, LnKind kind) {
  MEMOPT_RETURN_IF_ERROR(RequireFloatInput(ctx, 0, "Y_grad"));
  MEMOPT_RETURN_IF_ERROR(RequireFloatInput(ctx, 1, kind == LnKind::kInvertible ? "Y" : "X"));
  MEMOPT_RETURN_IF_ERROR(RequireSameSize(ctx, 0, 1));
  const Tensor& dy = ctx.input(0);
  const Tensor& x = ctx.input(1);
  MEMOPT_ASSIGN_OR_RETURN(RowView v, LayerNormRows(ctx, x));
  MEMOPT_RETURN_IF_ERROR(CheckPerColumn(ctx, 2, "scale", v.cols));
  const Tensor& scale = ctx.input(2);
  int inv_index = 4;
  if (kind == LnKind::kFull) {
    MEMOPT_RETURN_IF_ERROR(CheckPerRow(ctx, 3, "mean", v.rows));
  } else if (kind == LnKind::kSimplified) {
    inv_index = 3;
  } else {
    MEMOPT_RETURN_IF_ERROR(CheckPerColumn(ctx, 3, "bias", v.cols));
  }
  MEMOPT_RETURN_IF_ERROR(CheckPerRow(ctx, inv_index, "inv_std_dev", v.rows));
  const bool has_bias_grad = kind != LnKind::kSimplified;

  ctx.outputs[0] = Tensor(x.dtype(), x.shape());
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
    if (kind == LnKind::kFull) {
      mean_buf.resize(static_cast<size_t>(v.rows));
      ConvertToCompute(ctx.input(3), mean_buf.data());
      mean = mean_buf.data();
    }
    std::vector<C> bias_buf;
    if (kind == LnKind::kInvertible) {
      bias_buf.resize(static_cast<size_t>(v.cols));
      ConvertToCompute(ctx.input(3), bias_buf.data());
    }
    FloatOut<C> dx(ctx.outputs[0]);
    auto xhat_at = [&](int64_t r, int64_t c) -> C {
      const C xv = xin[r * v.cols + c];
      if (kind == LnKind::kFull) return (xv - mean[r]) * inv[r];
      if (kind == LnKind::kSimplified) return xv * inv[r];
      return (xv - bias_buf[static_cast<size_t>(c)]) / s[c];
    };
    // dX: rows in parallel.
    ParallelFor(v.rows, 12 * v.cols, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const int64_t base = r * v.cols;
        const C inv_r = inv[r];
        double sum_b = 0, sum_bx = 0;
        for (int64_t c = 0; c < v.cols; ++c) {
          const C b = g[base + c] * s[c] * inv_r;
          sum_b += b;
          sum_bx += static_cast<double>(b) * static_cast<double>(xhat_at(r, c));
        }
        const C mean_b = kind == LnKind::kSimplified ? C(0) : static_cast<C>(sum_b / static_cast<double>(v.cols));
        const C mean_bx = static_cast<C>(sum_bx / static_cast<double>(v.cols));
        for (int64_t c = 0; c < v.cols; ++c) {
          dx[base + c] = g[base + c] * s[c] * inv_r - mean_b - xhat_at(r, c) * mean_bx;
        }
      }
    });
    // dScale / dBias: column blocks in parallel, rows in order.
    std::vector<double> dscale(static_cast<size_t>(v.cols), 0.0), dbias(static_cast<size_t>(v.cols), 0.0);
    ParallelFor(v.cols, 4 * v.rows, [&](int64_t begin, int64_t end) {
      for (int64_t r = 0; r < v.rows; ++r) {
        for (int64_t c = begin; c < end; ++c) {
          const double gv = g[r * v.cols + c];
          dscale[static_cast<size_t>(c)] += gv * static_cast<double>(xhat_at(r, c));
          dbias[static_cast<size_t>(c)] += gv;
        }
      }
    });
    if (ctx.output_wanted(1)) StoreFromCompute(dscale.data(), ctx.outputs[1]);
    if (has_bias_grad && ctx.output_wanted(2)) StoreFromCompute(dbias.data(), ctx.outputs[2]);
    return Status::Ok();
  });
}

Status LayerNormGradKernel(KernelContext& ctx) { return LayerNormGradImpl(ctx, LnKind::kFull); }
Status SimplifiedLayerNormGradKernel(KernelContext& ctx) { return LayerNormGradImpl(ctx, LnKind::kSimplified); }
Status InvertibleLayerNormGradKernel(KernelContext& ctx) { return LayerNormGradImpl(ctx, LnKind::kInvertible); }

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
  ctx.outputs[0] = Tensor(x.dtype(), x.shape());
  if (ctx.output_wanted(1)) ctx.outputs[1] = Tensor(scale.dtype(), scale.shape());
  if (ctx.output_wanted(2)) ctx.outputs[2] = Tensor(scale.dtype(), scale.shape());
  return DispatchCompute(ctx, x.dtype(), [&]<typename C>() -> Status {
    FloatIn<C> g(dy);
    FloatIn<C> xin(x);
    FloatIn<C> s(scale);
    FloatIn<C> mean(ctx.input(3));
    FloatIn<C> inv(ctx.input(4));
    FloatOut<C> dx(ctx.outputs[0]);
    std::vector<double> dscale(static_cast<size_t>(channels), 0.0), dbias(static_cast<size_t>(channels), 0.0);
    for (int64_t b = 0; b < n; ++b) {
      for (int64_t c = 0; c < channels; ++c) {
        const int64_t base = (b * channels + c) * spatial;
        for (int64_t k = 0; k < spatial; ++k) {
          const double gv = g[base + k];
          dbias[c] += gv;
          dscale[c] += gv * (static_cast<double>(xin[base + k]) - mean[c]) * inv[c];
        }
      }
    }
    const double m = static_cast<double>(n * spatial);
    for (int64_t b = 0; b < n; ++b) {
      for (int64_t c = 0; c < channels; ++c) {
        const int64_t base = (b * channels + c) * spatial;
        const double coef = static_cast<double>(s[c]) * inv[c] / m;
        for (int64_t k = 0; k < spatial; ++k) {
          const double xhat = (static_cast<double>(xin[base + k]) - mean[c]) * inv[c];
          dx[base + k] = static_cast<C>(coef * (m * g[base + k] - dbias[c] - xhat * dscale[c]));
        }
      }
    }
    if (ctx.output_wanted(1)) StoreFromCompute(dscale.data(), ctx.outputs[1]);
    if (ctx.output_wanted(2)) StoreFromCompute(dbias.data(), ctx.outputs[2]);
    return Status::Ok();
  });
}

}  // namespace

void RegisterNormGradKernels(KernelRegistry& r) {
  const auto types = FloatTypes();
  r.Register(kMsDomain, "LayerNormalizationGrad", LayerNormGradKernel, types);
  r.Register(kMsDomain, "SimplifiedLayerNormalizationGrad", SimplifiedLayerNormGradKernel, types);
  r.Register(kMsDomain, "InvertibleLayerNormalizationGrad", InvertibleLayerNormGradKernel, types);
  r.Register(kMsDomain, "BatchNormalizationGrad", BatchNormGradKernel, types);
}

}  // namespace memopt::training
