// Losses: SoftmaxCrossEntropyLoss (opset 12/13), NegativeLogLikelihoodLoss (opset 12/13) and the
// com.microsoft forms ORTModule exports: SoftmaxCrossEntropyLossInternal (ignore_index as an
// input, output_type attribute, log_prob always produced; ort_training_ops.md 2.15) and
// NegativeLogLikelihoodLossInternal / NegativeLogLikelihoodLossInternal2.
//
// Scores/log-probs are [N, C] or [N, C, D1..Dk], labels [N] or [N, D1..Dk]. For each (n, d):
// y = label, ignored iff y == ignore_index, w = ignored ? 0 : (weights ? weights[y] : 1),
// l = -w * logp[n, y, d]. none: l (labels' shape); sum: sum(l); mean: sum(l) / sum(w).
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <type_traits>
#include <vector>

#include "exec/kernels/math_util.h"
#include "exec/math/vector_math.h"
#include "ir/op_registry.h"

namespace memopt::math {
namespace {

struct LossSpec {
  int weights_input = 2;
  std::optional<int64_t> ignore_index;
  std::string reduction = "mean";
  DataType out_type = DataType::kUndefined;  ///< kUndefined: the scores' type
};

/// Computes the reduced NLL into ctx.outputs[0]; lp(b, y, j) is the log-probability of class y at
/// batch b, position j (scores laid out [n, c, d]).
template <typename LogProb>
Status Nll(KernelContext& ctx, const LossSpec& spec, LogProb&& lp, int64_t n, int64_t c, int64_t d) {
  const Tensor& labels_t = ctx.input(1);
  if (labels_t.dtype() != DataType::kInt32 && labels_t.dtype() != DataType::kInt64) {
    return UnsupportedDtype(ctx, labels_t.dtype(), "labels (int32/int64 expected)");
  }
  if (labels_t.numel() != n * d) {
    return ctx.Error("labels " + ShapeToString(labels_t.shape()) + " do not match the scores' [N, D1..Dk] = " +
                     std::to_string(n) + " x " + std::to_string(d) + " elements");
  }
  const std::vector<int64_t> labels = labels_t.ToInt64Vector();
  std::optional<InView<double>> weights;
  if (ctx.has_input(spec.weights_input)) {
    const Tensor& w = ctx.input(spec.weights_input);
    if (w.numel() != c) {
      return ctx.Error("weights " + ShapeToString(w.shape()) + " must have C = " + std::to_string(c) + " entries");
    }
    weights.emplace(w);
  }
  std::vector<double> loss(static_cast<size_t>(n * d));
  double loss_sum = 0, weight_sum = 0;
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t j = 0; j < d; ++j) {
      const int64_t y = labels[b * d + j];
      if (spec.ignore_index && y == *spec.ignore_index) {
        loss[b * d + j] = 0;
        continue;
      }
      if (y < 0 || y >= c) {
        return ctx.Error("label " + std::to_string(y) + " at position " + std::to_string(b * d + j) +
                         " is outside [0, " + std::to_string(c) + ")");
      }
      const double w = weights ? (*weights)[y] : 1.0;
      const double l = -w * static_cast<double>(lp(b, y, j));
      loss[b * d + j] = l;
      loss_sum += l;
      weight_sum += w;
    }
  }
  const DataType out_type = spec.out_type == DataType::kUndefined ? ctx.input(0).dtype() : spec.out_type;
  if (spec.reduction == "none") {
    ctx.outputs[0] = Tensor(out_type, labels_t.shape());
    OutView<double> ov(ctx.outputs[0]);
    for (size_t i = 0; i < loss.size(); ++i) ov[static_cast<int64_t>(i)] = loss[i];
  } else if (spec.reduction == "sum" || spec.reduction == "mean") {
    ctx.outputs[0] = Tensor(out_type, {});
    double v = loss_sum;
    if (spec.reduction == "mean") {
      v = weight_sum != 0 ? loss_sum / weight_sum : std::numeric_limits<double>::quiet_NaN();
    }
    ctx.outputs[0].SetFromDouble(0, v);
  } else {
    return ctx.Error("unknown reduction '" + spec.reduction + "' (expected none, sum or mean)");
  }
  return Status::Ok();
}

Expected<std::vector<int64_t>> ScoresShape(const KernelContext& ctx) {
  const Tensor& s = ctx.input(0);
  if (s.rank() < 2) return ctx.Error("scores " + ShapeToString(s.shape()) + " need rank >= 2 ([N, C, ...])");
  if (!IsFloatFamily(s.dtype())) return UnsupportedDtype(ctx, s.dtype(), "scores");
  return s.shape();
}

/// log(sum(exp(x[0..n)))) of a contiguous float row, through ExpArray (`buf`: n scratch floats).
/// The max is taken in 8 partial maxima; NaN is ignored there and propagates through the sum.
float LogSumExpRow(const float* x, int64_t n, float* buf) {
  float mx = math::RowMax(x, nullptr, n);
  if (std::isinf(mx)) mx = 0;
  return mx + std::log(math::ExpShiftedSum(x, nullptr, mx, buf, n));
}

/// log(sum(exp(x[k * stride]))) over k < n in C, max first (an infinite max counts as 0).
template <typename C>
C LogSumExp(const C* x, int64_t n, int64_t stride) {
  C mx = -std::numeric_limits<C>::infinity();
  for (int64_t k = 0; k < n; ++k) mx = std::max(mx, x[k * stride]);
  if (std::isinf(mx)) mx = 0;
  C sum = 0;
  for (int64_t k = 0; k < n; ++k) sum += std::exp(x[k * stride] - mx);
  return mx + std::log(sum);
}

/// Softmax cross entropy: log_prob = log_softmax over axis 1 (written to output 1 when wanted or
/// `always_log_prob`), then NLL. Only the per-position log-sum-exp is kept when log_prob is not
/// wanted. Scores are read a class row (or, strided, a block of positions) at a time, so float16
/// logits are not copied to float whole (exec/kernels/float_range.h).
Status SoftmaxCrossEntropy(KernelContext& ctx, const LossSpec& spec, bool always_log_prob) {
  MEMOPT_ASSIGN_OR_RETURN(std::vector<int64_t> shape, ScoresShape(ctx));
  const Tensor& scores = ctx.input(0);
  const int64_t n = shape[0], c = shape[1], d = ProductOf(shape, 2, static_cast<int64_t>(shape.size()));
  const DataType lp_type = spec.out_type == DataType::kUndefined ? scores.dtype() : spec.out_type;
  const bool want_lp = always_log_prob ? ctx.outputs.size() > 1 : ctx.output_wanted(1);
  return DispatchCompute(ctx, scores.dtype(), [&](auto tag) -> Status {
    using C = typename decltype(tag)::type;
    std::vector<C> lse(static_cast<size_t>(n * d));
    const int64_t span = BlockPositions(c, d);
    if (d == 1) {
      ParallelFor(n, 2 * c, [&](int64_t begin, int64_t end) {
        std::vector<C> in(static_cast<size_t>(c)), buf(static_cast<size_t>(c));
        for (int64_t r = begin; r < end; ++r) {
          const C* x = ReadRange<C>(scores, r * c, c, in.data());
          if constexpr (std::is_same_v<C, float>) {  // vectorised exp (exec/math/vector_math.h)
            lse[static_cast<size_t>(r)] = LogSumExpRow(x, c, buf.data());
          } else {
            lse[static_cast<size_t>(r)] = LogSumExp(x, c, 1);
          }
        }
      });
    } else {
      ParallelFor(n, 2 * c * d, [&](int64_t begin, int64_t end) {
        std::vector<C> block(static_cast<size_t>(c * span));
        for (int64_t b = begin; b < end; ++b) {
          for (int64_t j0 = 0; j0 < d; j0 += span) {
            const int64_t len = std::min(span, d - j0);
            ConvertBlock(scores, b * c * d + j0, c, d, len, block.data());
            for (int64_t jj = 0; jj < len; ++jj) {
              lse[static_cast<size_t>(b * d + j0 + jj)] = LogSumExp(block.data() + jj, c, len);
            }
          }
        }
      });
    }
    MEMOPT_RETURN_IF_ERROR(Nll(
        ctx, spec,
        [&](int64_t b, int64_t y, int64_t j) {
          return static_cast<C>(scores.GetAsDouble((b * c + y) * d + j)) - lse[b * d + j];
        },
        n, c, d));
    if (!want_lp) return Status::Ok();
    ctx.outputs[1] = Tensor::Uninitialized(lp_type, shape);  // every element is written
    Tensor& lp = ctx.outputs[1];
    const bool in_place = StoredAs<C>(lp);
    ParallelFor(n, c * d, [&](int64_t begin, int64_t end) {
      std::vector<C> in(static_cast<size_t>(d == 1 ? c : c * span)), out(in.size());
      for (int64_t b = begin; b < end; ++b) {
        if (d == 1) {
          const C* x = ReadRange<C>(scores, b * c, c, in.data());
          C* y = in_place ? lp.data<C>() + b * c : out.data();
          const C l = lse[static_cast<size_t>(b)];
          for (int64_t k = 0; k < c; ++k) y[k] = x[k] - l;
          if (!in_place) StoreRange(y, c, lp, b * c);
          continue;
        }
        for (int64_t j0 = 0; j0 < d; j0 += span) {
          const int64_t len = std::min(span, d - j0);
          ConvertBlock(scores, b * c * d + j0, c, d, len, in.data());
          for (int64_t k = 0; k < c; ++k) {
            for (int64_t jj = 0; jj < len; ++jj) {
              out[k * len + jj] = in[k * len + jj] - lse[static_cast<size_t>(b * d + j0 + jj)];
            }
            StoreRange(out.data() + k * len, len, lp, (b * c + k) * d + j0);
          }
        }
      }
    });
    return Status::Ok();
  });
}

Status NegativeLogLikelihood(KernelContext& ctx, const LossSpec& spec) {
  MEMOPT_ASSIGN_OR_RETURN(std::vector<int64_t> shape, ScoresShape(ctx));
  const Tensor& input = ctx.input(0);
  const int64_t n = shape[0], c = shape[1], d = ProductOf(shape, 2, static_cast<int64_t>(shape.size()));
  return DispatchCompute(ctx, input.dtype(), [&](auto tag) -> Status {
    using C = typename decltype(tag)::type;
    // One element per sample: read where it lies, not the whole [N, C, D] input.
    return Nll(
        ctx, spec,
        [&](int64_t b, int64_t y, int64_t j) {
          C v;
          ConvertRange(input, (b * c + y) * d + j, 1, &v);
          return v;
        },
        n, c, d);
  });
}

LossSpec OnnxSpec(const KernelContext& ctx) {
  LossSpec spec;
  spec.reduction = ctx.node->GetString("reduction", "mean");
  if (ctx.node->HasAttr("ignore_index")) spec.ignore_index = ctx.node->GetInt("ignore_index", 0);
  return spec;
}

/// Internal forms: ignore_index is input 3 (an int64 scalar tensor), output_type an attribute.
Expected<LossSpec> InternalSpec(const KernelContext& ctx) {
  LossSpec spec;
  spec.reduction = ctx.node->GetString("reduction", "mean");
  if (ctx.has_input(3)) {
    const Tensor& ii = ctx.input(3);
    if (ii.numel() != 1) return ctx.Error("ignore_index must be a scalar, got " + ShapeToString(ii.shape()));
    spec.ignore_index = ii.ToInt64Vector()[0];
  }
  if (ctx.node->HasAttr("output_type")) {
    const int64_t t = ctx.node->GetInt("output_type", 0);
    if (!IsKnownDataType(static_cast<int32_t>(t)) || !IsFloatFamily(static_cast<DataType>(t))) {
      return ctx.Error("output_type " + std::to_string(t) + " is not a floating type");
    }
    spec.out_type = static_cast<DataType>(t);
  }
  return spec;
}

Status SoftmaxCrossEntropyLoss(KernelContext& ctx) { return SoftmaxCrossEntropy(ctx, OnnxSpec(ctx), false); }

Status NegativeLogLikelihoodLoss(KernelContext& ctx) { return NegativeLogLikelihood(ctx, OnnxSpec(ctx)); }

Status SoftmaxCrossEntropyLossInternal(KernelContext& ctx) {
  MEMOPT_ASSIGN_OR_RETURN(LossSpec spec, InternalSpec(ctx));
  return SoftmaxCrossEntropy(ctx, spec, true);
}

Status NegativeLogLikelihoodLossInternal(KernelContext& ctx) {
  MEMOPT_ASSIGN_OR_RETURN(LossSpec spec, InternalSpec(ctx));
  return NegativeLogLikelihood(ctx, spec);
}

}  // namespace

static void RegisterLossKernels(OpRegistry& r) {
  r.SetCpuKernel("", "SoftmaxCrossEntropyLoss", SoftmaxCrossEntropyLoss, FloatTypes());
  r.SetCpuKernel("", "NegativeLogLikelihoodLoss", NegativeLogLikelihoodLoss, FloatTypes());
  r.SetCpuKernel("com.microsoft", "SoftmaxCrossEntropyLossInternal", SoftmaxCrossEntropyLossInternal, FloatTypes());
  r.SetCpuKernel("com.microsoft", "NegativeLogLikelihoodLossInternal", NegativeLogLikelihoodLossInternal, FloatTypes());
  r.SetCpuKernel("com.microsoft", "NegativeLogLikelihoodLossInternal2", NegativeLogLikelihoodLossInternal, FloatTypes());
}

}  // namespace memopt::math

MEMOPT_OPS(loss, loss_cpu) {
  memopt::math::RegisterLossKernels(ops);
}
