// BatchNormalization (inference and training, opsets 1..15), com.microsoft BatchNormInternal,
// InstanceNormalization, GroupNormalization (opset 18: per-group scale/bias, opset 21:
// per-channel), LRN, MeanVarianceNormalization. Statistics are summed in blocks of the compute
// type added in double (block_sum.h).
#include <cmath>

#include "exec/kernels/block_sum.h"
#include "exec/kernels/math_util.h"
#include "ir/op_registry.h"

namespace memopt::math {
namespace {

/// Mean and population variance of `count` values read as base[i * stride] for i in [0, count).
struct Moments {
  double mean = 0;
  double var = 0;
};

template <typename C>
Moments RowMoments(const C* base, int64_t count) {
  Moments m;
  if (count == 0) return m;
  m.mean = SumOf(base, count) / static_cast<double>(count);
  m.var = SquaredDeviations(base, count, m.mean) / static_cast<double>(count);
  return m;
}

Status CheckPerChannel(const KernelContext& ctx, int input, int64_t expected, const char* name) {
  if (!ctx.has_input(input)) return ctx.Error(std::string(name) + " is required");
  if (ctx.input(input).numel() != expected) {
    return ctx.Error(std::string(name) + " " + ShapeToString(ctx.input(input).shape()) + " must have " +
                     std::to_string(expected) + " elements");
  }
  return Status::Ok();
}

/// Shared body of BatchNormalization and BatchNormInternal. spatial=false normalises every
/// (channel, position) feature separately; training uses batch statistics and fills the stat
/// outputs 1..num_stat_outputs: running mean, running var (momentum-blended), then saved mean and
/// saved inverse std (1 / sqrt(batch var + eps)).
Status BatchNormCore(KernelContext& ctx, bool spatial, bool training, int num_stat_outputs) {
  const Tensor& x = ctx.input(0);
  if (!IsFloatFamily(x.dtype())) return UnsupportedDtype(ctx, x.dtype(), "X");
  if (x.rank() < 2) return ctx.Error("X " + ShapeToString(x.shape()) + " needs rank >= 2 ([N, C, ...])");
  const Node& node = *ctx.node;
  const double eps = node.GetFloat("epsilon", 1e-5f);
  const double momentum = node.GetFloat("momentum", 0.9f);
  const int64_t n = x.dim(0);
  const int64_t s = spatial ? ProductOf(x.shape(), 2, x.rank()) : 1;
  const int64_t c = spatial ? x.dim(1) : ProductOf(x.shape(), 1, x.rank());
  for (int i = 1; i <= 4; ++i) {
    static const char* kNames[] = {"", "scale", "B", "input_mean", "input_var"};
    MEMOPT_RETURN_IF_ERROR(CheckPerChannel(ctx, i, c, kNames[i]));
  }
  const DataType stat_type = ctx.input(3).dtype();
  ctx.outputs[0] = Tensor::Uninitialized(x.dtype(), x.shape());  // every (image, channel) row is written
  if (training) {
    for (int i = 1; i <= num_stat_outputs; ++i) {
      if (ctx.output_wanted(i)) ctx.outputs[i] = Tensor(stat_type, {c});
    }
  }
  return DispatchCompute(ctx, x.dtype(), [&](auto tag) -> Status {
    using C = typename decltype(tag)::type;
    // (image, channel) rows of s values are read (and written) one at a time, so 16-bit tensors
    // are not copied to float whole.
    InView<double> scale(ctx.input(1)), bias(ctx.input(2)), mean_in(ctx.input(3)), var_in(ctx.input(4));
    Tensor& y = ctx.outputs[0];
    const size_t row_len = static_cast<size_t>(s);
    std::vector<double> mean(c), var(c);
    if (training) {
      ParallelFor(c, 2 * n * s, [&](int64_t begin, int64_t end) {
        ChunkBuffers<C> buf;
        for (int64_t ch = begin; ch < end; ++ch) {
          double sum = 0;
          for (int64_t b = 0; b < n; ++b) sum += SumOf(ReadRange(x, (b * c + ch) * s, s, buf, 0), s);
          const double count = static_cast<double>(n * s);
          mean[ch] = count > 0 ? sum / count : 0.0;
          double sq = 0;
          for (int64_t b = 0; b < n; ++b) {
            sq += SquaredDeviations(ReadRange(x, (b * c + ch) * s, s, buf, 0), s, mean[ch]);
          }
          var[ch] = count > 0 ? sq / count : 0.0;
        }
      });
      auto store = [&](int out, auto value) {
        if (!ctx.output_wanted(out) || !ctx.outputs[out].defined()) return;
        for (int64_t ch = 0; ch < c; ++ch) ctx.outputs[out].SetFromDouble(ch, value(ch));
      };
      store(1, [&](int64_t ch) { return mean_in[ch] * momentum + mean[ch] * (1 - momentum); });
      store(2, [&](int64_t ch) { return var_in[ch] * momentum + var[ch] * (1 - momentum); });
      if (num_stat_outputs == 4) {
        store(3, [&](int64_t ch) { return mean[ch]; });
        store(4, [&](int64_t ch) { return 1.0 / std::sqrt(var[ch] + eps); });
      }
    } else {
      for (int64_t ch = 0; ch < c; ++ch) {
        mean[ch] = mean_in[ch];
        var[ch] = var_in[ch];
      }
    }
    ParallelFor(n * c, s, [&](int64_t begin, int64_t end) {
      ChunkBuffers<C> buf;
      for (int64_t row = begin; row < end; ++row) {
        const int64_t ch = row % c;
        const double inv = 1.0 / std::sqrt(var[ch] + eps);
        const C a = static_cast<C>(scale[ch] * inv);
        const C b = static_cast<C>(bias[ch] - mean[ch] * scale[ch] * inv);
        const C* p = ReadRange(x, row * s, s, buf, 0);
        C* q = WriteRange(y, row * s, row_len, buf, 1);
        for (int64_t i = 0; i < s; ++i) q[i] = p[i] * a + b;
        CommitRange(q, s, y, row * s);
      }
    });
    return Status::Ok();
  });
}

Status BatchNormalization(KernelContext& ctx) {
  const Node& node = *ctx.node;
  const int version = node.since_version == 0 ? 15 : node.since_version;  // 0: unknown, take the newest
  // Before opset 9, spatial=0 normalises every (channel, position) feature separately.
  const bool spatial = version >= 9 || node.GetInt("spatial", 1) != 0;
  if (version >= 14) return BatchNormCore(ctx, spatial, node.GetInt("training_mode", 0) != 0, 2);
  // Opsets 1..9: training when the statistics outputs are requested (and, before 7, is_test=0).
  bool extra = false;
  for (int i = 1; i < 5; ++i) extra = extra || ctx.output_wanted(i);
  return BatchNormCore(ctx, spatial, extra && (version >= 7 || node.GetInt("is_test", 0) == 0), 4);
}

/// com.microsoft BatchNormInternal (ort_training_ops.md 2.14): outputs Y, running_mean,
/// running_var, saved_mean, saved_inv_std; training_mode defaults to 1.
Status BatchNormInternal(KernelContext& ctx) {
  return BatchNormCore(ctx, true, ctx.node->GetInt("training_mode", 1) != 0, 4);
}

/// Normalises each of `rows` contiguous rows of length `len` of x into y (a row read and written
/// at a time); affine(row, i, v) applies the scale/bias entry of element i of the row.
template <typename C, typename Affine>
void NormalizeRows(const Tensor& x, Tensor& y, int64_t rows, int64_t len, double eps, Affine&& affine) {
  ParallelFor(rows, 2 * len, [&](int64_t begin, int64_t end) {
    ChunkBuffers<C> buf;
    for (int64_t r = begin; r < end; ++r) {
      const C* xr = ReadRange(x, r * len, len, buf, 0);
      C* yr = WriteRange(y, r * len, len, buf, 1);
      const Moments m = RowMoments(xr, len);
      const double inv = 1.0 / std::sqrt(m.var + eps);
      for (int64_t i = 0; i < len; ++i) {
        const double v = (static_cast<double>(xr[i]) - m.mean) * inv;
        yr[i] = static_cast<C>(affine(r, i, v));
      }
      CommitRange(yr, len, y, r * len);
    }
  });
}

Status InstanceNormalization(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (!IsFloatFamily(x.dtype())) return UnsupportedDtype(ctx, x.dtype(), "input");
  if (x.rank() < 2) return ctx.Error("input " + ShapeToString(x.shape()) + " needs rank >= 2 ([N, C, ...])");
  const int64_t c = x.dim(1);
  MEMOPT_RETURN_IF_ERROR(CheckPerChannel(ctx, 1, c, "scale"));
  MEMOPT_RETURN_IF_ERROR(CheckPerChannel(ctx, 2, c, "B"));
  const double eps = ctx.node->GetFloat("epsilon", 1e-5f);
  const int64_t s = ProductOf(x.shape(), 2, x.rank());
  ctx.outputs[0] = Tensor(x.dtype(), x.shape());
  return DispatchCompute(ctx, x.dtype(), [&](auto tag) -> Status {
    using C = typename decltype(tag)::type;
    InView<double> scale(ctx.input(1)), bias(ctx.input(2));
    NormalizeRows<C>(x, ctx.outputs[0], x.dim(0) * c, s, eps,
                  [&](int64_t r, int64_t, double v) { return v * scale[r % c] + bias[r % c]; });
    return Status::Ok();
  });
}

Status GroupNormalization(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (!IsFloatFamily(x.dtype())) return UnsupportedDtype(ctx, x.dtype(), "X");
  if (x.rank() < 2) return ctx.Error("X " + ShapeToString(x.shape()) + " needs rank >= 2 ([N, C, ...])");
  const int64_t groups = ctx.node->GetInt("num_groups", 0);
  const int64_t c = x.dim(1);
  if (groups <= 0 || c % groups != 0) {
    return ctx.Error("num_groups " + std::to_string(groups) + " must be positive and divide C = " + std::to_string(c));
  }
  // Opset 18 has one scale/bias entry per group, opset 21 one per channel.
  const int64_t scale_len = ctx.has_input(1) ? ctx.input(1).numel() : 0;
  const bool per_channel = ctx.node->since_version >= 21 || (scale_len == c && c != groups);
  const int64_t expected = per_channel ? c : groups;
  MEMOPT_RETURN_IF_ERROR(CheckPerChannel(ctx, 1, expected, "scale"));
  MEMOPT_RETURN_IF_ERROR(CheckPerChannel(ctx, 2, expected, "bias"));
  const double eps = ctx.node->GetFloat("epsilon", 1e-5f);
  const int64_t s = ProductOf(x.shape(), 2, x.rank());
  const int64_t cg = c / groups;
  ctx.outputs[0] = Tensor(x.dtype(), x.shape());
  return DispatchCompute(ctx, x.dtype(), [&](auto tag) -> Status {
    using C = typename decltype(tag)::type;
    InView<double> scale(ctx.input(1)), bias(ctx.input(2));
    NormalizeRows<C>(x, ctx.outputs[0], x.dim(0) * groups, cg * s, eps, [&](int64_t r, int64_t i, double v) {
      const int64_t g = r % groups;
      const int64_t k = per_channel ? g * cg + i / s : g;
      return v * scale[k] + bias[k];
    });
    return Status::Ok();
  });
}

Status Lrn(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (!IsFloatFamily(x.dtype())) return UnsupportedDtype(ctx, x.dtype(), "X");
  if (x.rank() < 2) return ctx.Error("X " + ShapeToString(x.shape()) + " needs rank >= 2 ([N, C, ...])");
  const int64_t size = ctx.node->GetInt("size", 0);
  if (size <= 0) return ctx.Error("attribute 'size' must be positive");
  const double alpha = ctx.node->GetFloat("alpha", 1e-4f);
  const double beta = ctx.node->GetFloat("beta", 0.75f);
  const double bias = ctx.node->GetFloat("bias", 1.0f);
  const int64_t c = x.dim(1);
  const int64_t s = ProductOf(x.shape(), 2, x.rank());
  const int64_t before = (size - 1) / 2, after = size - 1 - before;
  ctx.outputs[0] = Tensor(x.dtype(), x.shape());
  return DispatchCompute(ctx, x.dtype(), [&](auto tag) -> Status {
    using C = typename decltype(tag)::type;
    Tensor& y = ctx.outputs[0];
    // Each output row reads its window of channel rows (16-bit rows converted per output row).
    ParallelFor(x.dim(0) * c, s * size, [&](int64_t begin, int64_t end) {
      ChunkBuffers<C> buf;
      for (int64_t row = begin; row < end; ++row) {
        const int64_t b = row / c, ch = row % c;
        const int64_t lo = std::max<int64_t>(0, ch - before), hi = std::min<int64_t>(c - 1, ch + after);
        const C* xw = ReadRange(x, (b * c + lo) * s, (hi - lo + 1) * s, buf, 0);
        C* yr = WriteRange(y, row * s, s, buf, 1);
        for (int64_t i = 0; i < s; ++i) {
          double sq = 0;
          for (int64_t k = lo; k <= hi; ++k) {
            const double v = static_cast<double>(xw[(k - lo) * s + i]);
            sq += v * v;
          }
          const double v = static_cast<double>(xw[(ch - lo) * s + i]);
          yr[i] = static_cast<C>(v / std::pow(bias + alpha / static_cast<double>(size) * sq, beta));
        }
        CommitRange(yr, s, y, row * s);
      }
    });
    return Status::Ok();
  });
}

/// (X - mean) / (sqrt(E[X^2] - mean^2) + 1e-9) over `axes` (default [0, 2, 3]).
Status MeanVarianceNormalization(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (!IsFloatFamily(x.dtype())) return UnsupportedDtype(ctx, x.dtype(), "X");
  std::vector<int64_t> axes = ctx.node->HasAttr("axes") ? ctx.node->GetInts("axes") : std::vector<int64_t>{0, 2, 3};
  auto norm = NormalizeAxes(axes, x.rank());
  if (!norm) return ctx.Error("axes " + ShapeToString(axes) + " are out of range for X " + ShapeToString(x.shape()));
  // Index of the kept (not reduced) coordinates, via strides that are 0 on reduced axes.
  std::vector<int64_t> kept_shape = x.shape();
  for (int64_t a : *norm) kept_shape[a] = 1;
  const int64_t kept = NumElements(kept_shape);
  const std::vector<int64_t> kept_strides = BroadcastStrides(kept_shape, x.shape());
  const double count = kept > 0 ? static_cast<double>(x.numel()) / static_cast<double>(kept) : 1.0;
  ctx.outputs[0] = Tensor(x.dtype(), x.shape());
  return DispatchCompute(ctx, x.dtype(), [&](auto tag) -> Status {
    using C = typename decltype(tag)::type;
    // X and Y walked in order, a chunk at a time for 16-bit tensors.
    ChunkedReader<C> xv(x);
    std::vector<double> sum(kept, 0.0), sq(kept, 0.0);
    ForEachIndexed(x.shape(), {kept_strides}, [&](int64_t i, const int64_t* off) {
      const double v = static_cast<double>(xv[i]);
      sum[off[0]] += v;
      sq[off[0]] += v * v;
    });
    for (int64_t k = 0; k < kept; ++k) {
      const double mean = sum[k] / count;
      const double var = std::max(0.0, sq[k] / count - mean * mean);
      sum[k] = mean;
      sq[k] = std::sqrt(var) + 1e-9;
    }
    ChunkedWriter<C> yv(ctx.outputs[0]);
    ForEachIndexed(x.shape(), {kept_strides}, [&](int64_t i, const int64_t* off) {
      yv[i] = static_cast<C>((static_cast<double>(xv[i]) - sum[off[0]]) / sq[off[0]]);
    });
    return Status::Ok();
  });
}

}  // namespace

static void RegisterNormKernels(OpRegistry& r) {
  r.SetCpuKernel("", "BatchNormalization", BatchNormalization, FloatTypes());
  r.SetCpuKernel("com.microsoft", "BatchNormInternal", BatchNormInternal, FloatTypes());
  r.SetCpuKernel("", "InstanceNormalization", InstanceNormalization, FloatTypes());
  r.SetCpuKernel("", "GroupNormalization", GroupNormalization, FloatTypes());
  r.SetCpuKernel("", "LRN", Lrn, FloatTypes());
  r.SetCpuKernel("", "MeanVarianceNormalization", MeanVarianceNormalization, FloatTypes());
}

}  // namespace memopt::math

MEMOPT_OPS(norm, norm_cpu) {
  memopt::math::RegisterNormKernels(ops);
}
