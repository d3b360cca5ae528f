// MatMul, com.microsoft FusedMatMul / TransposeMatMul, MatMulInteger.
//
// All three share one batched product planned by exec/kernels/matmul_plan.h (also used by the
// CUDA wrappers), which covers transA/transB and FusedMatMul's transBatch layouts without copying.
// Float batches of small products with B transposed run on exec/kernels/small_gemm.h, others on
// BLAS (whose small-matrix path is as fast for untransposed operands). float16/bfloat16 products
// run in float one output tile at a time (exec/kernels/half_gemm.h), not on float copies of the
// whole operands.
#include <algorithm>
#include <cstring>
#include <type_traits>

#include "exec/kernels/half_gemm.h"
#include "exec/kernels/math_util.h"
#include "exec/kernels/matmul_plan.h"
#include "exec/kernels/small_gemm.h"
#include "ir/op_registry.h"

namespace memopt::math {
namespace {

using Plan = MatMulPlan;

Expected<Plan> MakePlan(const KernelContext& ctx, const Tensor& a, const Tensor& b, bool trans_a, bool trans_b,
                        bool trans_batch_a, bool trans_batch_b) {
  auto plan = PlanMatMul(a.shape(), b.shape(), trans_a, trans_b, trans_batch_a, trans_batch_b);
  if (!plan.ok()) return ctx.Error(plan.status().message());
  return std::move(plan).value();
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
  // Small float products with B transposed (attention's Q K^T in the gradient graphs), where BLAS
  // packs the transposed operand on every call: on exec/kernels/small_gemm.h.
  if constexpr (std::is_same_v<C, float>) {
    if (count > 1 && p.b.trans && SmallGemmApplies(p.m, p.n, p.k)) {
      ParallelFor(count, p.m * p.n * p.k, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
          SmallGemm(p.a.trans, p.b.trans, p.m, p.n, p.k, alpha, a + p.a_off[i], p.a.ld, b + p.b_off[i], p.b.ld,
                    y + i * mn, p.n);
        }
      });
      return;
    }
  }
  // Batch entries on the pool's threads at once (each product single-threaded); one entry alone
  // is split by Gemm itself.
  ParallelFor(count, p.m * p.n * std::max<int64_t>(p.k, 1), [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      Gemm(p.a.trans, p.b.trans, p.m, p.n, p.k, alpha, a + p.a_off[i], p.a.ld, b + p.b_off[i], p.b.ld, C(0),
           y + i * mn, p.n);
    }
  });
}

/// float16/bfloat16: tile by tile in float (half_gemm.h); stacked A entries sharing one B as one
/// product, as RunFloat does.
void RunHalf(const Plan& p, DataType dtype, const uint16_t* a, const uint16_t* b, float alpha, uint16_t* y) {
  const int64_t count = static_cast<int64_t>(p.a_off.size());
  const bool b_shared = std::all_of(p.b_off.begin(), p.b_off.end(), [](int64_t o) { return o == 0; });
  const bool a_stacked =
      !p.a.trans && p.a.ld == p.k && p.a.batch_stride == p.m * p.k && NumElements(p.a.batch) == count;
  HalfOperand ha{a, p.a_off.data(), p.a.ld, p.a.trans};
  HalfOperand hb{b, p.b_off.data(), p.b.ld, p.b.trans};
  if (count > 1 && b_shared && a_stacked) {
    HalfBatchedGemm(dtype, count * p.m, p.n, p.k, alpha, ha, hb, 1, y);
    return;
  }
  HalfBatchedGemm(dtype, p.m, p.n, p.k, alpha, ha, hb, count, y);
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
  ctx.outputs[0] = Tensor::Uninitialized(a.dtype(), p.out_shape);  // every product writes its block
  Tensor& y = ctx.outputs[0];
  if (a.dtype() == DataType::kFloat16 || a.dtype() == DataType::kBfloat16) {
    RunHalf(p, a.dtype(), a.data<uint16_t>(), b.data<uint16_t>(), static_cast<float>(alpha), y.data<uint16_t>());
    return Status::Ok();
  }
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

static void RegisterMatMulKernels(OpRegistry& r) {
  std::vector<DataType> matmul_types = FloatTypes();
  for (DataType t : {DataType::kInt32, DataType::kInt64, DataType::kUint32, DataType::kUint64}) {
    matmul_types.push_back(t);
  }
  r.SetCpuKernel("", "MatMul", MatMul, matmul_types);
  r.SetCpuKernel("com.microsoft", "FusedMatMul", FusedMatMul, FloatTypes());
  r.SetCpuKernel("com.microsoft", "TransposeMatMul", FusedMatMul, FloatTypes());
  r.SetCpuKernel("", "MatMulInteger", MatMulInteger, {DataType::kInt8, DataType::kUint8});
}

}  // namespace memopt::math

MEMOPT_OPS(matmul, matmul_cpu) {
  memopt::math::RegisterMatMulKernels(ops);
}
