// The CPU kernels of the layer normalisations (layer_norm.cc has the op definitions and the
// decode they share with CUDA): LayerNormalization, SimplifiedLayerNormalization and
// RMSNormalization on the 2-D view at `axis` (N rows of D = prod(shape[axis:]) elements,
// statistics summed in blocks of the stash type (exec/kernels/block_sum.h): float, or double for
// double stash / double inputs),
// and SkipLayerNormalization / SkipSimplifiedLayerNormalization over the last axis.
#include <cmath>

#include "exec/kernels/block_sum.h"
#include "exec/kernels/math_util.h"
#include "ir/op_registry.h"
#include "ops/norm/layer_norm.h"

namespace memopt::norm {
namespace {

using namespace math;

/// Offsets into a per-row parameter (Scale/B) for each of the D elements of a row: the parameter
/// broadcast (right-aligned) to shape[axis:], which DecodeLayerNorm checked.
std::vector<int64_t> ParamIndex(const Tensor& param, const std::vector<int64_t>& row_shape) {
  const int64_t d = NumElements(row_shape);
  std::vector<int64_t> idx(static_cast<size_t>(d));
  if (param.numel() == d) {
    for (int64_t i = 0; i < d; ++i) idx[i] = i;
    return idx;
  }
  ForEachIndexed(row_shape, {BroadcastStrides(param.shape(), row_shape)},
                 [&](int64_t i, const int64_t* off) { idx[i] = off[0]; });
  return idx;
}

/// Shared body: `simplified` skips the mean (RMS normalisation). Outputs: Y at out_y, mean at
/// out_mean (-1: none), inverse std at out_inv (-1: none).
Status NormalizeLastDims(KernelContext& ctx, bool simplified, int bias_input, int out_mean, int out_inv) {
  const Tensor& x = ctx.input(0);
  if (!IsFloatFamily(x.dtype())) return UnsupportedDtype(ctx, x.dtype(), "X");
  if (!ctx.has_input(1)) return ctx.Error("Scale is required");
  const Tensor& scale = ctx.input(1);
  const Tensor* bias = bias_input >= 0 && ctx.has_input(bias_input) ? &ctx.input(bias_input) : nullptr;
  auto plan = DecodeLayerNorm(*ctx.node, x, scale, bias);
  if (!plan.ok()) return ctx.Error(plan.status().message());
  const NormRows& v = plan->rows;
  const std::vector<int64_t> si = ParamIndex(scale, v.row_shape);
  const std::vector<int64_t> bi = bias != nullptr ? ParamIndex(*bias, v.row_shape) : std::vector<int64_t>{};
  const double eps = plan->epsilon;
  const DataType stash = plan->stash;
  ctx.outputs[0] = Tensor::Uninitialized(plan->y_type, x.shape());  // every row is written
  if (out_mean >= 0 && ctx.output_wanted(out_mean)) ctx.outputs[out_mean] = Tensor(stash, v.stat_shape);
  if (out_inv >= 0 && ctx.output_wanted(out_inv)) ctx.outputs[out_inv] = Tensor(stash, v.stat_shape);
  const DataType compute =
      (stash == DataType::kDouble || x.dtype() == DataType::kDouble) ? DataType::kDouble : DataType::kFloat;
  return DispatchCompute(ctx, compute, [&](auto tag) -> Status {
    using C = typename decltype(tag)::type;
    InView<C> sv(scale);
    std::optional<InView<C>> bv;
    if (bias != nullptr) bv.emplace(*bias);
    Tensor& y = ctx.outputs[0];
    std::vector<C> mean(static_cast<size_t>(v.rows)), inv(static_cast<size_t>(v.rows));
    const bool contiguous_params = scale.numel() == v.cols && (bias == nullptr || bias->numel() == v.cols);
    const size_t cols = static_cast<size_t>(v.cols);
    // Rows are read and written one at a time: 16-bit tensors are not copied to float whole.
    ParallelFor(v.rows, 3 * v.cols, [&](int64_t begin, int64_t end) {
      ChunkBuffers<C> buf;
      for (int64_t r = begin; r < end; ++r) {
        const C* row = ReadRange(x, r * v.cols, v.cols, buf, 0);
        C* out = WriteRange(y, r * v.cols, cols, buf, 1);
        C mu = 0;
        if (!simplified && v.cols > 0) mu = static_cast<C>(SumOf(row, v.cols) / static_cast<double>(v.cols));
        const double sq = SquaredDeviations(row, v.cols, static_cast<double>(mu));
        const C var = v.cols > 0 ? static_cast<C>(sq / static_cast<double>(v.cols)) : C(0);
        const C is = C(1) / std::sqrt(var + static_cast<C>(eps));
        mean[r] = mu;
        inv[r] = is;
        if (contiguous_params) {  // Scale and B are whole rows: the loop vectorises
          const C* sp = sv.data();
          if (bias != nullptr) {
            const C* bp = bv->data();
            for (int64_t i = 0; i < v.cols; ++i) out[i] = (row[i] - mu) * is * sp[i] + bp[i];
          } else {
            for (int64_t i = 0; i < v.cols; ++i) out[i] = (row[i] - mu) * is * sp[i];
          }
        } else {
          for (int64_t i = 0; i < v.cols; ++i) {
            C value = (row[i] - mu) * is * sv[si[i]];
            if (bias != nullptr) value += (*bv)[bi[i]];
            out[i] = value;
          }
        }
        CommitRange(out, v.cols, y, r * v.cols);
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

/// SkipLayerNormalization (simplified=false: input, skip, gamma, beta?, bias?) and
/// SkipSimplifiedLayerNormalization (input, skip, gamma, bias?). Normalises s = input + skip +
/// bias over the last axis; outputs: output, mean?, inv_std_var?, input_skip_bias_sum?.
/// skip may have fewer leading elements than input (broadcast over the batch).
Status SkipNorm(KernelContext& ctx, bool simplified) {
  const Tensor& x = ctx.input(0);
  if (!IsFloatFamily(x.dtype())) return UnsupportedDtype(ctx, x.dtype(), "input");
  auto plan = DecodeSkipNorm(*ctx.node, ctx.inputs, simplified);
  if (!plan.ok()) return ctx.Error(plan.status().message());
  const Tensor& skip = ctx.input(1);
  const Tensor& gamma = ctx.input(2);
  const Tensor* beta = plan->beta_input >= 0 ? &ctx.input(plan->beta_input) : nullptr;
  const Tensor* bias = plan->bias_input >= 0 ? &ctx.input(plan->bias_input) : nullptr;
  const int64_t h = plan->hidden;
  const int64_t rows = plan->rows;
  const double eps = plan->epsilon;
  const std::vector<int64_t>& stat_shape = plan->stat_shape;
  ctx.outputs[0] = Tensor(x.dtype(), x.shape());
  if (ctx.output_wanted(1)) ctx.outputs[1] = Tensor(DataType::kFloat, stat_shape);
  if (ctx.output_wanted(2)) ctx.outputs[2] = Tensor(DataType::kFloat, stat_shape);
  if (ctx.output_wanted(3)) ctx.outputs[3] = Tensor(x.dtype(), x.shape());
  return DispatchCompute(ctx, x.dtype(), [&](auto tag) -> Status {
    using C = typename decltype(tag)::type;
    InView<C> gv(gamma);
    std::optional<InView<C>> betav, biasv;
    if (beta != nullptr) betav.emplace(*beta);
    if (bias != nullptr) biasv.emplace(*bias);
    Tensor& y = ctx.outputs[0];
    std::vector<C> mean(static_cast<size_t>(rows)), inv(static_cast<size_t>(rows));
    const int64_t skip_n = skip.numel();
    const size_t hs = static_cast<size_t>(h);
    // A row at a time: input and skip read, the sum (output 3) and Y stored per row.
    ParallelFor(rows, 4 * h, [&](int64_t begin, int64_t end) {
      ChunkBuffers<C> buf;
      for (int64_t r = begin; r < end; ++r) {
        const C* xr = ReadRange(x, r * h, h, buf, 0);
        const C* kr = ReadRange(skip, (r * h) % skip_n, h, buf, 1);  // skip rows repeat whole
        C* s = buf.Get(2, hs);
        for (int64_t i = 0; i < h; ++i) {
          C val = xr[i] + kr[i];
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
        C* out = buf.Get(3, hs);
        for (int64_t i = 0; i < h; ++i) {
          C value = (s[i] - mu) * is * gv[i];
          if (beta != nullptr) value += (*betav)[i];
          out[i] = value;
        }
        StoreRange(out, h, y, r * h);
        if (HasOutput(ctx, 3)) StoreRange(s, h, ctx.outputs[3], r * h);
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
    return Status::Ok();
  });
}

}  // namespace

Status LayerNormalizationCpu(KernelContext& ctx) { return NormalizeLastDims(ctx, false, 2, 1, 2); }
Status SimplifiedLayerNormalizationCpu(KernelContext& ctx) { return NormalizeLastDims(ctx, true, -1, -1, 1); }
Status RMSNormalizationCpu(KernelContext& ctx) { return NormalizeLastDims(ctx, true, -1, -1, -1); }
Status SkipLayerNormalizationCpu(KernelContext& ctx) { return SkipNorm(ctx, false); }
Status SkipSimplifiedLayerNormalizationCpu(KernelContext& ctx) { return SkipNorm(ctx, true); }

}  // namespace memopt::norm

MEMOPT_OPS(norm, layer_norm_cpu) {
  using namespace memopt;
  const std::vector<DataType> floats = math::FloatTypes();
  ops.SetCpuKernel("", "LayerNormalization", norm::LayerNormalizationCpu, floats);
  ops.SetCpuKernel("", "SimplifiedLayerNormalization", norm::SimplifiedLayerNormalizationCpu, floats);
  ops.SetCpuKernel("", "RMSNormalization", norm::RMSNormalizationCpu, floats);
  ops.SetCpuKernel(kMicrosoftDomain, "SkipLayerNormalization", norm::SkipLayerNormalizationCpu, floats);
  ops.SetCpuKernel(kMicrosoftDomain, "SkipSimplifiedLayerNormalization", norm::SkipSimplifiedLayerNormalizationCpu,
                   floats);
}
