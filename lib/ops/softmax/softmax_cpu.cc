// Softmax, LogSoftmax, Hardmax (opset < 13: 2-D view at axis, default axis 1; opset >= 13: one
// axis, default -1) and com.microsoft BiasSoftmax (opset-11 semantics plus a broadcast bias row,
// ort_training_ops.md 2.5). Softmax sums are accumulated in the compute type with the row max
// subtracted first; contiguous float rows take the vectorised exp (exec/math/vector_math.h).
#include <cmath>
#include <limits>
#include <type_traits>

#include "exec/kernels/math_util.h"
#include "exec/math/vector_math.h"
#include "ir/op_registry.h"

namespace memopt::math {
namespace {

enum class Kind { kSoftmax, kLogSoftmax, kHardmax };

/// View of the reduced axis: `outer` blocks of `n` elements spaced `inner` apart.
struct AxisView {
  int64_t outer = 1, n = 1, inner = 1;
};

Expected<AxisView> ViewAt(const KernelContext& ctx, const Tensor& x, bool coerce_2d, int64_t axis_attr) {
  // Rank 0 is treated as [1].
  const int64_t rank = std::max<int64_t>(1, x.rank());
  auto axis = NormalizeAxis(axis_attr, rank);
  if (!axis) {
    return ctx.Error("axis " + std::to_string(axis_attr) + " is out of range for input " + ShapeToString(x.shape()));
  }
  std::vector<int64_t> shape = x.shape();
  if (shape.empty()) shape = {1};
  AxisView v;
  v.outer = ProductOf(shape, 0, *axis);
  if (coerce_2d) {
    v.n = ProductOf(shape, *axis, rank);
    v.inner = 1;
  } else {
    v.n = shape[*axis];
    v.inner = ProductOf(shape, *axis + 1, rank);
  }
  return v;
}

/// Softmax or LogSoftmax of a contiguous float row with its max `mx` known: the exponentials and
/// their sum through ExpShiftedSum (exec/math/vector_math.h).
void ContiguousFloatRow(Kind kind, const float* x, const float* b, float* y, int64_t n, float mx) {
  const float sum = ExpShiftedSum(x, b, mx, y, n);
  if (kind == Kind::kLogSoftmax) {
    const float log_sum = std::log(sum);
    if (b != nullptr) {
      for (int64_t i = 0; i < n; ++i) y[i] = ((x[i] + b[i]) - mx) - log_sum;
    } else {
      for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - mx) - log_sum;
    }
    return;
  }
  ScaleArray(y, 1.0f / sum, n);
}

/// One softmax-family row: n values at x[i * stride], optional additive bias b[i * stride].
template <typename C>
void Row(Kind kind, const C* x, const C* b, C* y, int64_t n, int64_t stride) {
  if (n == 0) return;
  if constexpr (std::is_same_v<C, float>) {
    if (stride == 1 && kind != Kind::kHardmax) {  // the whole row vectorised: max, exp and sum, scale
      float mx = RowMax(x, b, n);
      if (std::isinf(mx) && mx < 0) mx = 0;  // every value -inf (or NaN): avoid inf - inf
      ContiguousFloatRow(kind, x, b, y, n, mx);
      return;
    }
  }
  auto at = [&](int64_t i) { return b != nullptr ? x[i * stride] + b[i * stride] : x[i * stride]; };
  C mx = -std::numeric_limits<C>::infinity();
  int64_t arg = 0;
  for (int64_t i = 0; i < n; ++i) {
    const C v = at(i);
    if (v > mx) {
      mx = v;
      arg = i;
    }
  }
  if (kind == Kind::kHardmax) {
    for (int64_t i = 0; i < n; ++i) y[i * stride] = i == arg ? C(1) : C(0);
    return;
  }
  if (std::isinf(mx) && mx < 0) mx = 0;  // every value -inf (or NaN): avoid inf - inf
  C sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    const C e = std::exp(at(i) - mx);
    if (kind == Kind::kSoftmax) y[i * stride] = e;
    sum += e;
  }
  if (kind == Kind::kSoftmax) {
    const C inv = C(1) / sum;
    for (int64_t i = 0; i < n; ++i) y[i * stride] *= inv;
  } else {
    const C lse = mx + std::log(sum);
    for (int64_t i = 0; i < n; ++i) y[i * stride] = at(i) - lse;
  }
}

template <Kind kKind>
Status SoftmaxFamily(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (!IsFloatFamily(x.dtype())) return UnsupportedDtype(ctx, x.dtype(), "input");
  const int version = ctx.node->since_version == 0 ? 13 : ctx.node->since_version;
  const bool coerce = version < 13;
  const int64_t axis = ctx.node->GetInt("axis", coerce ? 1 : -1);
  MEMOPT_ASSIGN_OR_RETURN(AxisView v, ViewAt(ctx, x, coerce, axis));
  ctx.outputs[0] = Tensor::Uninitialized(x.dtype(), x.shape());  // every row is written
  Tensor& y = ctx.outputs[0];
  return DispatchCompute(ctx, x.dtype(), [&](auto tag) -> Status {
    using C = typename decltype(tag)::type;
    // `rows` contiguous rows of v.n: float softmax and log-softmax many rows per call.
    auto contiguous = [&](const C* in, C* out, int64_t rows) {
      if constexpr (std::is_same_v<C, float>) {
        if (kKind != Kind::kHardmax) {
          SoftmaxRows(in, out, rows, v.n, kKind == Kind::kLogSoftmax);
          return;
        }
      }
      for (int64_t r = 0; r < rows; ++r) Row<C>(kKind, in + r * v.n, nullptr, out + r * v.n, v.n, 1);
    };
    if (StoredAs<C>(x)) {  // float or double: in place
      const C* xp = x.data<C>();
      C* yp = y.data<C>();
      if (v.inner == 1) {
        ParallelFor(v.outer, 3 * v.n, [&](int64_t begin, int64_t end) {
          contiguous(xp + begin * v.n, yp + begin * v.n, end - begin);
        });
        return Status::Ok();
      }
      ParallelFor(v.outer * v.inner, 3 * v.n, [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
          const int64_t o = r / v.inner, i = r % v.inner;
          const int64_t base = o * v.n * v.inner + i;
          Row<C>(kKind, xp + base, nullptr, yp + base, v.n, v.inner);
        }
      });
      return Status::Ok();
    }
    // float16/bfloat16: a block of rows (strided: of positions) converted at a time, not the
    // whole tensor (exec/kernels/float_range.h); the same arithmetic on the same float values.
    if (v.inner == 1) {
      const int64_t per_block = BlockPositions(v.n, v.outer);
      ParallelFor(v.outer, 3 * v.n, [&](int64_t begin, int64_t end) {
        std::vector<C> in(static_cast<size_t>(per_block * v.n)), out(in.size());
        for (int64_t r0 = begin; r0 < end; r0 += per_block) {
          const int64_t rows = std::min(per_block, end - r0);
          ConvertRange(x, r0 * v.n, rows * v.n, in.data());
          contiguous(in.data(), out.data(), rows);
          StoreRange(out.data(), rows * v.n, y, r0 * v.n);
        }
      });
      return Status::Ok();
    }
    const int64_t span = BlockPositions(v.n, v.inner);
    ParallelFor(v.outer, 3 * v.n * v.inner, [&](int64_t begin, int64_t end) {
      std::vector<C> in(static_cast<size_t>(v.n * span)), out(in.size());
      for (int64_t o = begin; o < end; ++o) {
        for (int64_t i0 = 0; i0 < v.inner; i0 += span) {
          const int64_t len = std::min(span, v.inner - i0);
          const int64_t base = o * v.n * v.inner + i0;
          ConvertBlock(x, base, v.n, v.inner, len, in.data());
          for (int64_t j = 0; j < len; ++j) Row<C>(kKind, in.data() + j, nullptr, out.data() + j, v.n, len);
          for (int64_t k = 0; k < v.n; ++k) StoreRange(out.data() + k * len, len, y, base + k * v.inner);
        }
      }
    });
    return Status::Ok();
  });
}

Status BiasSoftmax(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& bias = ctx.input(1);
  if (!IsFloatFamily(x.dtype())) return UnsupportedDtype(ctx, x.dtype(), "data");
  if (!ctx.node->HasAttr("is_inner_broadcast")) return ctx.Error("attribute 'is_inner_broadcast' is required");
  const bool inner_broadcast = ctx.node->GetInt("is_inner_broadcast", 0) != 0;
  MEMOPT_ASSIGN_OR_RETURN(AxisView v, ViewAt(ctx, x, true, ctx.node->GetInt("axis", 1)));
  const int64_t e = v.n, rows = v.outer;
  const int64_t bias_rows = e > 0 ? bias.numel() / e : 0;
  if (e > 0 && (bias.numel() % e != 0 || bias_rows == 0 || rows % bias_rows != 0)) {
    return ctx.Error("bias " + ShapeToString(bias.shape()) + " does not broadcast over data " +
                     ShapeToString(x.shape()) + " (its size must be a multiple of the softmax row length " +
                     std::to_string(e) + " dividing the data size)");
  }
  ctx.outputs[0] = Tensor::Uninitialized(x.dtype(), x.shape());  // every row is written
  Tensor& y = ctx.outputs[0];
  return DispatchCompute(ctx, x.dtype(), [&](auto tag) -> Status {
    using C = typename decltype(tag)::type;
    const int64_t repeat = bias_rows > 0 ? rows / bias_rows : 1;
    const bool direct = StoredAs<C>(y);
    ParallelFor(rows, 3 * e, [&](int64_t begin, int64_t end) {
      std::vector<C> xin(static_cast<size_t>(e)), bin(xin.size()), out(direct ? 0 : xin.size());
      for (int64_t r = begin; r < end; ++r) {
        const int64_t rb = inner_broadcast ? r / repeat : r % bias_rows;
        const C* xr = ReadRange(x, r * e, e, xin.data());
        const C* br = ReadRange(bias, rb * e, e, bin.data());
        C* yr = WriteRange(y, r * e, out.data());
        Row<C>(Kind::kSoftmax, xr, br, yr, e, 1);
        CommitRange(yr, e, y, r * e);
      }
    });
    return Status::Ok();
  });
}

}  // namespace

static void RegisterSoftmaxKernels(OpRegistry& r) {
  r.SetCpuKernel("", "Softmax", SoftmaxFamily<Kind::kSoftmax>, FloatTypes());
  r.SetCpuKernel("", "LogSoftmax", SoftmaxFamily<Kind::kLogSoftmax>, FloatTypes());
  r.SetCpuKernel("", "Hardmax", SoftmaxFamily<Kind::kHardmax>, FloatTypes());
  r.SetCpuKernel("com.microsoft", "BiasSoftmax", BiasSoftmax, FloatTypes());
}

}  // namespace memopt::math

MEMOPT_OPS(softmax, softmax_cpu) {
  memopt::math::RegisterSoftmaxKernels(ops);
}
