// LayerNormalization (ONNX 17 and the ORT contrib form in domain "" v1), SimplifiedLayerNormalization
// (domain "" v1), RMSNormalization (opset 23), and the com.microsoft inference fusions
// SkipLayerNormalization / SkipSimplifiedLayerNormalization (ort_training_ops.md 2.11-2.13).
//
// All work on the 2-D view at `axis`: N rows of D = prod(shape[axis:]) elements, statistics
// accumulated in the stash type (float, or double for double stash / double inputs).
#include <cmath>

#include "exec/kernels/math_util.h"

namespace memopt::math {
namespace {

/// Offsets into a per-row parameter (Scale/B) for each of the D elements of a row: the parameter
/// is broadcast (right-aligned) to shape[axis:].
Expected<std::vector<int64_t>> ParamIndex(const KernelContext& ctx, const Tensor& param, const char* name,
                                          const std::vector<int64_t>& row_shape) {
  const int64_t d = NumElements(row_shape);
  std::vector<int64_t> idx(static_cast<size_t>(d));
  if (param.numel() == d) {
    for (int64_t i = 0; i < d; ++i) idx[i] = i;
    return idx;
  }
  auto b = BroadcastShape(param.shape(), row_shape);
  if (!b || *b != row_shape) {
    return ctx.Error(std::string(name) + " " + ShapeToString(param.shape()) +
                     " does not broadcast to the normalized shape " + ShapeToString(row_shape));
  }
  ForEachIndexed(row_shape, {BroadcastStrides(param.shape(), row_shape)},
                 [&](int64_t i, const int64_t* off) { idx[i] = off[0]; });
  return idx;
}

/// Type of Mean/InvStdDev and of the statistics: double for stash_type=11, float otherwise.
DataType StashType(const KernelContext& ctx) {
  const int64_t stash = ctx.node->GetInt("stash_type", 1);
  return stash == static_cast<int64_t>(DataType::kDouble) ? DataType::kDouble : DataType::kFloat;
}

struct RowView {
  int64_t axis = 0;
  int64_t rows = 0;
  int64_t d = 0;
  std::vector<int64_t> row_shape;   ///< shape[axis:]
  std::vector<int64_t> stat_shape;  ///< shape with dims axis.. set to 1
};

Expected<RowView> MakeRows(const KernelContext& ctx, const Tensor& x) {
  auto axis = NormalizeAxis(ctx.node->GetInt("axis", -1), x.rank());
  if (!axis) {
    return ctx.Error("axis " + std::to_string(ctx.node->GetInt("axis", -1)) + " is out of range for X " +
                     ShapeToString(x.shape()));
  }
  RowView v;
  v.axis = *axis;
  v.rows = ProductOf(x.shape(), 0, v.axis);
  v.d = ProductOf(x.shape(), v.axis, x.rank());
  v.row_shape.assign(x.shape().begin() + v.axis, x.shape().end());
  v.stat_shape = x.shape();
  for (int64_t i = v.axis; i < x.rank(); ++i) v.stat_shape[i] = 1;
  return v;
}

/// Shared body: `simplified` skips the mean (RMS normalisation). Outputs: Y at out_y, mean at
/// out_mean (-1: none), inverse std at out_inv (-1: none).
Status NormalizeLastDims(KernelContext& ctx, bool simplified, int bias_input, int out_mean, int out_inv) {
  const Tensor& x = ctx.input(0);
  if (!IsFloatFamily(x.dtype())) return UnsupportedDtype(ctx, x.dtype(), "X");
  if (!ctx.has_input(1)) return ctx.Error("Scale is required");
  const Tensor& scale = ctx.input(1);
  const Tensor* bias = bias_input >= 0 && ctx.has_input(bias_input) ? &ctx.input(bias_input) : nullptr;
  MEMOPT_ASSIGN_OR_RETURN(RowView v, MakeRows(ctx, x));
  MEMOPT_ASSIGN_OR_RETURN(std::vector<int64_t> si, ParamIndex(ctx, scale, "Scale", v.row_shape));
  std::vector<int64_t> bi;
  if (bias != nullptr) {
    MEMOPT_ASSIGN_OR_RETURN(bi, ParamIndex(ctx, *bias, "B", v.row_shape));
  }
  const double eps = ctx.node->GetFloat("epsilon", 1e-5f);
  const DataType y_type = IsFloatFamily(scale.dtype()) ? scale.dtype() : x.dtype();
  const DataType stash = StashType(ctx);
  ctx.outputs[0] = Tensor(y_type, x.shape());
  if (out_mean >= 0 && ctx.output_wanted(out_mean)) ctx.outputs[out_mean] = Tensor(stash, v.stat_shape);
  if (out_inv >= 0 && ctx.output_wanted(out_inv)) ctx.outputs[out_inv] = Tensor(stash, v.stat_shape);
  const DataType compute =
      (stash == DataType::kDouble || x.dtype() == DataType::kDouble) ? DataType::kDouble : DataType::kFloat;
  return DispatchCompute(ctx, compute, [&](auto tag) -> Status {
    using C = typename decltype(tag)::type;
    InView<C> xv(x);
    InView<C> sv(scale);
    std::optional<InView<C>> bv;
    if (bias != nullptr) bv.emplace(*bias);
    OutView<C> yv(ctx.outputs[0]);
    std::vector<C> mean(static_cast<size_t>(v.rows)), inv(static_cast<size_t>(v.rows));
    const C* xp = xv.data();
    C* yp = yv.data();
    ParallelFor(v.rows, 3 * v.d, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const C* row = xp + r * v.d;
        C mu = 0;
        if (!simplified) {
          C sum = 0;
          for (int64_t i = 0; i < v.d; ++i) sum += row[i];
          mu = v.d > 0 ? sum / static_cast<C>(v.d) : C(0);
        }
        C sq = 0;
        for (int64_t i = 0; i < v.d; ++i) {
          const C c = row[i] - mu;
          sq += c * c;
        }
        const C var = v.d > 0 ? sq / static_cast<C>(v.d) : C(0);
        const C is = C(1) / std::sqrt(var + static_cast<C>(eps));
        mean[r] = mu;
        inv[r] = is;
        C* out = yp + r * v.d;
        for (int64_t i = 0; i < v.d; ++i) {
          C y = (row[i] - mu) * is * sv[si[i]];
          if (bias != nullptr) y += (*bv)[bi[i]];
          out[i] = y;
        }
      }
    });
    if (HasOutput(ctx, out_mean)) {
      OutView<C> mv(ctx.outputs[out_mean]);
      for (int64_t r = 0; r < v.rows; ++r) mv[r] = mean[r];
    }
    if (HasOutput(ctx, out_inv)) {
      OutView<C> iv(ctx.outputs[out_inv]);
      for (int64_t r = 0; r < v.rows; ++r) iv[r] = inv[r];
    }
    return Status::Ok();
  });
}

Status LayerNormalization(KernelContext& ctx) { return NormalizeLastDims(ctx, false, 2, 1, 2); }
Status SimplifiedLayerNormalization(KernelContext& ctx) { return NormalizeLastDims(ctx, true, -1, -1, 1); }
Status RMSNormalization(KernelContext& ctx) { return NormalizeLastDims(ctx, true, -1, -1, -1); }

/// SkipLayerNormalization (simplified=false: input, skip, gamma, beta?, bias?) and
/// SkipSimplifiedLayerNormalization (input, skip, gamma, bias?). Normalises s = input + skip +
/// bias over the last axis; outputs: output, mean?, inv_std_var?, input_skip_bias_sum?.
/// skip may have fewer leading elements than input (broadcast over the batch).
Status SkipNorm(KernelContext& ctx, bool simplified) {
  const Tensor& x = ctx.input(0);
  if (!IsFloatFamily(x.dtype())) return UnsupportedDtype(ctx, x.dtype(), "input");
  if (x.rank() < 1) return ctx.Error("input must have rank >= 1");
  if (!ctx.has_input(1) || !ctx.has_input(2)) return ctx.Error("skip and gamma are required");
  const Tensor& skip = ctx.input(1);
  const Tensor& gamma = ctx.input(2);
  const Tensor* beta = !simplified && ctx.has_input(3) ? &ctx.input(3) : nullptr;
  const int bias_at = simplified ? 3 : 4;
  const Tensor* bias = ctx.has_input(bias_at) ? &ctx.input(bias_at) : nullptr;
  const int64_t h = x.dim(x.rank() - 1);
  const int64_t rows = h > 0 ? x.numel() / h : 0;
  if (skip.numel() == 0 || x.numel() % skip.numel() != 0 || skip.dim(skip.rank() - 1) != h) {
    return ctx.Error("skip " + ShapeToString(skip.shape()) + " does not match input " + ShapeToString(x.shape()));
  }
  for (const Tensor* p : {&gamma, beta, bias}) {
    if (p != nullptr && p->numel() != h) {
      return ctx.Error("gamma/beta/bias " + ShapeToString(p->shape()) + " must have " + std::to_string(h) +
                       " elements (the hidden size)");
    }
  }
  const double eps = ctx.node->GetFloat("epsilon", 1e-12f);
  std::vector<int64_t> stat_shape = x.shape();
  stat_shape.back() = 1;
  ctx.outputs[0] = Tensor(x.dtype(), x.shape());
  if (ctx.output_wanted(1)) ctx.outputs[1] = Tensor(DataType::kFloat, stat_shape);
  if (ctx.output_wanted(2)) ctx.outputs[2] = Tensor(DataType::kFloat, stat_shape);
  if (ctx.output_wanted(3)) ctx.outputs[3] = Tensor(x.dtype(), x.shape());
  return DispatchCompute(ctx, x.dtype(), [&](auto tag) -> Status {
    using C = typename decltype(tag)::type;
    InView<C> xv(x), kv(skip), gv(gamma);
    std::optional<InView<C>> betav, biasv;
    if (beta != nullptr) betav.emplace(*beta);
    if (bias != nullptr) biasv.emplace(*bias);
    OutView<C> yv(ctx.outputs[0]);
    std::vector<C> sum(static_cast<size_t>(x.numel()));
    std::vector<C> mean(static_cast<size_t>(rows)), inv(static_cast<size_t>(rows));
    const int64_t skip_n = skip.numel();
    ParallelFor(rows, 4 * h, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        C* s = sum.data() + r * h;
        for (int64_t i = 0; i < h; ++i) {
          C val = xv[r * h + i] + kv[(r * h + i) % skip_n];
          if (bias != nullptr) val += (*biasv)[i];
          s[i] = val;
        }
        C mu = 0;
        if (!simplified) {
          C acc = 0;
          for (int64_t i = 0; i < h; ++i) acc += s[i];
          mu = acc / static_cast<C>(h);
        }
        C sq = 0;
        for (int64_t i = 0; i < h; ++i) sq += (s[i] - mu) * (s[i] - mu);
        const C is = C(1) / std::sqrt(sq / static_cast<C>(h) + static_cast<C>(eps));
        mean[r] = mu;
        inv[r] = is;
        for (int64_t i = 0; i < h; ++i) {
          C y = (s[i] - mu) * is * gv[i];
          if (beta != nullptr) y += (*betav)[i];
          yv[r * h + i] = y;
        }
      }
    });
    if (HasOutput(ctx, 1)) {
      OutView<C> mv(ctx.outputs[1]);
      for (int64_t r = 0; r < rows; ++r) mv[r] = mean[r];
    }
    if (HasOutput(ctx, 2)) {
      OutView<C> iv(ctx.outputs[2]);
      for (int64_t r = 0; r < rows; ++r) iv[r] = inv[r];
    }
    if (HasOutput(ctx, 3)) {
      OutView<C> sv(ctx.outputs[3]);
      for (int64_t i = 0; i < x.numel(); ++i) sv[i] = sum[i];
    }
    return Status::Ok();
  });
}

Status SkipLayerNormalization(KernelContext& ctx) { return SkipNorm(ctx, false); }
Status SkipSimplifiedLayerNormalization(KernelContext& ctx) { return SkipNorm(ctx, true); }

}  // namespace

void RegisterLayerNormKernels(KernelRegistry& r) {
  r.Register("", "LayerNormalization", LayerNormalization, FloatTypes());
  r.Register("", "SimplifiedLayerNormalization", SimplifiedLayerNormalization, FloatTypes());
  r.Register("", "RMSNormalization", RMSNormalization, FloatTypes());
  r.Register("com.microsoft", "SkipLayerNormalization", SkipLayerNormalization, FloatTypes());
  r.Register("com.microsoft", "SkipSimplifiedLayerNormalization", SkipSimplifiedLayerNormalization, FloatTypes());
}

}  // namespace memopt::math
