// MatMul, com.microsoft FusedMatMul / TransposeMatMul, MatMulInteger.
//
// All three share one batched product: each operand is described by where its logical matrices
// [rows, cols] live in memory (leading dimension, BLAS transpose flag, distance between
// consecutive batch entries), which covers transA/transB and the transBatch layouts of
// FusedMatMul (ort_training_ops.md 2.10) without copying. Batch dims broadcast like numpy.
#include <algorithm>
#include <cstring>

#include "exec/kernels/math_util.h"

namespace memopt::math {
namespace {

/// Where the logical [rows, cols] matrices of one operand live.
struct Operand {
  std::vector<int64_t> batch;  ///< logical batch dims
  int64_t rows = 0;
  int64_t cols = 0;
  bool trans = false;        ///< stored as [cols, rows] rows of length ld
  int64_t ld = 0;            ///< row stride of the stored matrix
  int64_t batch_stride = 0;  ///< elements between consecutive flattened batch entries
  bool vector = false;       ///< rank-1 operand (numpy promotion; the added dim is dropped)

  /// Offset of logical element (r, c) within one batch entry.
  int64_t At(int64_t r, int64_t c) const { return trans ? c * ld + r : r * ld + c; }
};

/// `is_b`: rank-1 becomes [K, 1] instead of [1, K].
Operand Describe(const std::vector<int64_t>& s, bool trans, bool trans_batch, bool is_b) {
  Operand op;
  const size_t r = s.size();
  if (r == 1) {
    op.vector = true;
    op.rows = is_b ? s[0] : 1;
    op.cols = is_b ? 1 : s[0];
    op.ld = op.cols;
    return op;
  }
  if (!trans_batch || r == 2) {
    op.batch.assign(s.begin(), s.end() - 2);
    op.trans = trans;
    op.rows = trans ? s[r - 1] : s[r - 2];
    op.cols = trans ? s[r - 2] : s[r - 1];
    op.ld = s[r - 1];
    op.batch_stride = op.rows * op.cols;
    return op;
  }
  // transBatch: physical [X, b0..bn, Y] where (X, Y) = (rows, cols), or (cols, rows) with trans.
  op.batch.assign(s.begin() + 1, s.end() - 1);
  const int64_t bn = NumElements(op.batch);
  op.trans = trans;
  op.rows = trans ? s[r - 1] : s[0];
  op.cols = trans ? s[0] : s[r - 1];
  op.ld = bn * s[r - 1];
  op.batch_stride = s[r - 1];
  return op;
}

struct Plan {
  Operand a, b;
  std::vector<int64_t> batch;         ///< broadcast batch dims of the output
  std::vector<int64_t> a_off, b_off;  ///< element offset of each output batch entry's operands
  std::vector<int64_t> out_shape;
  int64_t m = 0, n = 0, k = 0;
};

Expected<Plan> MakePlan(const KernelContext& ctx, const Tensor& a, const Tensor& b, bool trans_a, bool trans_b,
                        bool trans_batch_a, bool trans_batch_b) {
  if (a.rank() == 0 || b.rank() == 0) return ctx.Error("MatMul operands must have rank >= 1");
  Plan p;
  p.a = Describe(a.shape(), trans_a, trans_batch_a, false);
  p.b = Describe(b.shape(), trans_b, trans_batch_b, true);
  if (p.a.cols != p.b.rows) {
    return ctx.Error("inner dimensions differ: A " + ShapeToString(a.shape()) + " gives K=" + std::to_string(p.a.cols) +
                     ", B " + ShapeToString(b.shape()) + " gives K=" + std::to_string(p.b.rows));
  }
  auto batch = BroadcastShape(p.a.batch, p.b.batch);
  if (!batch) {
    return ctx.Error("batch dims of A " + ShapeToString(a.shape()) + " and B " + ShapeToString(b.shape()) +
                     " do not broadcast");
  }
  p.batch = *batch;
  p.m = p.a.rows;
  p.k = p.a.cols;
  p.n = p.b.cols;
  p.out_shape = p.batch;
  if (!p.a.vector) p.out_shape.push_back(p.m);
  if (!p.b.vector) p.out_shape.push_back(p.n);
  const int64_t count = NumElements(p.batch);
  p.a_off.resize(count);
  p.b_off.resize(count);
  if (count > 0) {
    ForEachIndexed(p.batch, {BroadcastStrides(p.a.batch, p.batch), BroadcastStrides(p.b.batch, p.batch)},
                   [&](int64_t i, const int64_t* off) {
                     p.a_off[i] = off[0] * p.a.batch_stride;
                     p.b_off[i] = off[1] * p.b.batch_stride;
                   });
  }
  return p;
}

template <typename C>
void RunFloat(const Plan& p, const C* a, const C* b, C alpha, C* y) {
  const int64_t count = static_cast<int64_t>(p.a_off.size());
  if (count == 0 || p.m == 0 || p.n == 0) return;
  const int64_t mn = p.m * p.n;
  // One product when B is shared by every batch entry and A's entries are stacked row-major.
  const bool b_shared = std::all_of(p.b_off.begin(), p.b_off.end(), [](int64_t o) { return o == 0; });
  const bool a_stacked =
      !p.a.trans && p.a.ld == p.k && p.a.batch_stride == p.m * p.k && NumElements(p.a.batch) == count;
  if (count > 1 && b_shared && a_stacked) {
    Gemm(false, p.b.trans, count * p.m, p.n, p.k, alpha, a, p.a.ld, b, p.b.ld, C(0), y, p.n);
    return;
  }
  for (int64_t i = 0; i < count; ++i) {
    Gemm(p.a.trans, p.b.trans, p.m, p.n, p.k, alpha, a + p.a_off[i], p.a.ld, b + p.b_off[i], p.b.ld, C(0), y + i * mn,
         p.n);
  }
}

/// Plain loops for integer MatMul and MatMulInteger: y = sum_k (a - za) * (b - zb).
template <typename TA, typename TB, typename TY, typename ZA, typename ZB>
void RunLoops(const Plan& p, const TA* a, const TB* b, TY* y, ZA za, ZB zb) {
  const int64_t count = static_cast<int64_t>(p.a_off.size());
  const int64_t mn = p.m * p.n;
  ParallelFor(count * p.m, p.n * p.k, [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      const int64_t bi = row / p.m;
      const int64_t i = row % p.m;
      const TA* ab = a + p.a_off[bi];
      const TB* bb = b + p.b_off[bi];
      TY* yr = y + bi * mn + i * p.n;
      for (int64_t j = 0; j < p.n; ++j) {
        TY acc = 0;
        for (int64_t kk = 0; kk < p.k; ++kk) {
          acc += static_cast<TY>((static_cast<TY>(ab[p.a.At(i, kk)]) - static_cast<TY>(za(bi, i))) *
                                 (static_cast<TY>(bb[p.b.At(kk, j)]) - static_cast<TY>(zb(bi, j))));
        }
        yr[j] = acc;
      }
    }
  });
}

Status MatMulCommon(KernelContext& ctx, bool trans_a, bool trans_b, bool trans_batch_a, bool trans_batch_b,
                    double alpha) {
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  if (a.dtype() != b.dtype()) {
    return ctx.Error("A is " + DataTypeName(a.dtype()) + " but B is " + DataTypeName(b.dtype()));
  }
  MEMOPT_ASSIGN_OR_RETURN(Plan p, MakePlan(ctx, a, b, trans_a, trans_b, trans_batch_a, trans_batch_b));
  ctx.outputs[0] = Tensor(a.dtype(), p.out_shape);
  Tensor& y = ctx.outputs[0];
  if (IsFloatFamily(a.dtype())) {
    return DispatchCompute(ctx, a.dtype(), [&](auto tag) -> Status {
      using C = typename decltype(tag)::type;
      InView<C> av(a);
      InView<C> bv(b);
      OutView<C> yv(y);
      RunFloat<C>(p, av.data(), bv.data(), static_cast<C>(alpha), yv.data());
      return Status::Ok();
    });
  }
  if (alpha != 1.0) return UnsupportedDtype(ctx, a.dtype(), "alpha != 1");
  auto zero = [](int64_t, int64_t) { return 0; };
  Status st = DispatchInt(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    RunLoops(p, a.data<T>(), b.data<T>(), y.data<T>(), zero, zero);
  });
  if (!st.ok()) return UnsupportedDtype(ctx, a.dtype());
  return Status::Ok();
}

Status MatMul(KernelContext& ctx) { return MatMulCommon(ctx, false, false, false, false, 1.0); }

Status FusedMatMul(KernelContext& ctx) {
  const Node& n = *ctx.node;
  return MatMulCommon(ctx, n.GetInt("transA", 0) != 0, n.GetInt("transB", 0) != 0, n.GetInt("transBatchA", 0) != 0,
                      n.GetInt("transBatchB", 0) != 0, n.GetFloat("alpha", 1.0f));
}

/// Zero point lookup: scalar, one per row/column of a 2-D operand, or one per (batch entry, row).
struct ZeroPoint {
  const Tensor* t = nullptr;
  int64_t per = 1;  ///< rows (A) or columns (B) per batch entry
  int32_t operator()(int64_t batch, int64_t i) const {
    if (t == nullptr) return 0;
    const int64_t n = t->numel();
    int64_t idx = n == 1 ? 0 : (n == per ? i : batch * per + i);
    if (idx >= n) idx = n - 1;
    return static_cast<int32_t>(t->GetAsDouble(idx));
  }
};

Status MatMulInteger(KernelContext& ctx) {
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  auto is8 = [](DataType t) { return t == DataType::kInt8 || t == DataType::kUint8; };
  if (!is8(a.dtype())) return UnsupportedDtype(ctx, a.dtype(), "A");
  if (!is8(b.dtype())) return UnsupportedDtype(ctx, b.dtype(), "B");
  MEMOPT_ASSIGN_OR_RETURN(Plan p, MakePlan(ctx, a, b, false, false, false, false));
  ZeroPoint za{ctx.has_input(2) ? &ctx.input(2) : nullptr, p.m};
  ZeroPoint zb{ctx.has_input(3) ? &ctx.input(3) : nullptr, p.n};
  ctx.outputs[0] = Tensor(DataType::kInt32, p.out_shape);
  int32_t* y = ctx.outputs[0].data<int32_t>();
  // Each B batch entry index for zero points per (batch, column): recover it from the offset.
  auto run = [&](const auto* ap, const auto* bp) {
    RunLoops(
        p, ap, bp, y,
        [&](int64_t bi, int64_t i) { return za(p.a.batch_stride ? p.a_off[bi] / p.a.batch_stride : 0, i); },
        [&](int64_t bi, int64_t j) { return zb(p.b.batch_stride ? p.b_off[bi] / p.b.batch_stride : 0, j); });
  };
  if (a.dtype() == DataType::kInt8) {
    if (b.dtype() == DataType::kInt8)
      run(a.data<int8_t>(), b.data<int8_t>());
    else
      run(a.data<int8_t>(), b.data<uint8_t>());
  } else {
    if (b.dtype() == DataType::kInt8)
      run(a.data<uint8_t>(), b.data<int8_t>());
    else
      run(a.data<uint8_t>(), b.data<uint8_t>());
  }
  return Status::Ok();
}

}  // namespace

void RegisterMatMulKernels(KernelRegistry& r) {
  std::vector<DataType> matmul_types = FloatTypes();
  for (DataType t : {DataType::kInt32, DataType::kInt64, DataType::kUint32, DataType::kUint64}) {
    matmul_types.push_back(t);
  }
  r.Register("", "MatMul", MatMul, matmul_types);
  r.Register("com.microsoft", "FusedMatMul", FusedMatMul, FloatTypes());
  r.Register("com.microsoft", "TransposeMatMul", FusedMatMul, FloatTypes());
  r.Register("", "MatMulInteger", MatMulInteger, {DataType::kInt8, DataType::kUint8});
}

}  // namespace memopt::math
