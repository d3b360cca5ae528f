// Gemm: Y = alpha * op(A) * op(B) + beta * C, C broadcast to [M, N] (unidirectional).
// float16/bfloat16 run in float one output tile at a time (exec/kernels/half_gemm.h).
#include "exec/kernels/gemm_nt.h"
#include "exec/kernels/half_gemm.h"
#include "exec/kernels/math_util.h"
#include "ir/op_registry.h"

namespace memopt::math {
namespace {

struct GemmDims {
  int64_t m = 0, n = 0, k = 0;
  bool trans_a = false, trans_b = false;
};

Expected<GemmDims> GetDims(const KernelContext& ctx, const Tensor& a, const Tensor& b) {
  GemmDims d;
  d.trans_a = ctx.node->GetInt("transA", 0) != 0;
  d.trans_b = ctx.node->GetInt("transB", 0) != 0;
  if (a.rank() != 2 || b.rank() != 2) {
    return ctx.Error("Gemm needs 2-D A and B, got A " + ShapeToString(a.shape()) + " and B " +
                     ShapeToString(b.shape()));
  }
  d.m = d.trans_a ? a.dim(1) : a.dim(0);
  d.k = d.trans_a ? a.dim(0) : a.dim(1);
  const int64_t kb = d.trans_b ? b.dim(1) : b.dim(0);
  d.n = d.trans_b ? b.dim(0) : b.dim(1);
  if (kb != d.k) {
    return ctx.Error("inner dimensions differ: op(A) is [" + std::to_string(d.m) + ", " + std::to_string(d.k) +
                     "] but op(B) is [" + std::to_string(kb) + ", " + std::to_string(d.n) + "]");
  }
  return d;
}

/// Offsets of C's elements when read as [M, N]; empty optional when C does not broadcast.
std::optional<std::vector<int64_t>> CStrides(const Tensor& c, int64_t m, int64_t n) {
  const std::vector<int64_t> target = {m, n};
  if (c.rank() > 2) return std::nullopt;
  auto bs = BroadcastShape(c.shape(), target);
  if (!bs || *bs != target) return std::nullopt;
  return BroadcastStrides(c.shape(), target);
}

Status Gemm(KernelContext& ctx) {
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  const Tensor* c = ctx.has_input(2) ? &ctx.input(2) : nullptr;
  if (a.dtype() != b.dtype()) {
    return ctx.Error("A is " + DataTypeName(a.dtype()) + " but B is " + DataTypeName(b.dtype()));
  }
  MEMOPT_ASSIGN_OR_RETURN(GemmDims d, GetDims(ctx, a, b));
  const double alpha = ctx.node->GetFloat("alpha", 1.0f);
  double beta = ctx.node->GetFloat("beta", 1.0f);
  std::vector<int64_t> cs;
  if (c != nullptr) {
    auto s = CStrides(*c, d.m, d.n);
    if (!s) {
      return ctx.Error("C " + ShapeToString(c->shape()) + " does not broadcast to [" + std::to_string(d.m) + ", " +
                       std::to_string(d.n) + "]");
    }
    cs = *s;
  }
  if (c == nullptr) beta = 0.0;
  ctx.outputs[0] = Tensor::Uninitialized(a.dtype(), {d.m, d.n});  // C is copied in, or beta is 0
  Tensor& y = ctx.outputs[0];
  const int64_t lda = a.dim(1), ldb = b.dim(1);

  if (a.dtype() == DataType::kFloat16 || a.dtype() == DataType::kBfloat16) {
    HalfTileInit init;
    if (beta != 0.0) {
      init = [&](int64_t i0, int64_t j0, int64_t rows, int64_t cols, float* tile, int64_t ld) {
        for (int64_t r = 0; r < rows; ++r)
          for (int64_t col = 0; col < cols; ++col)
            tile[r * ld + col] = static_cast<float>(beta * c->GetAsDouble((i0 + r) * cs[0] + (j0 + col) * cs[1]));
      };
    }
    const int64_t zero = 0;
    HalfBatchedGemm(a.dtype(), d.m, d.n, d.k, static_cast<float>(alpha), {a.data<uint16_t>(), &zero, lda, d.trans_a},
                    {b.data<uint16_t>(), &zero, ldb, d.trans_b}, 1, y.data<uint16_t>(), init);
    return Status::Ok();
  }
  if (IsFloatFamily(a.dtype())) {
    return DispatchCompute(ctx, a.dtype(), [&](auto tag) -> Status {
      using C = typename decltype(tag)::type;
      InView<C> av(a);
      InView<C> bv(b);
      OutView<C> yv(y);
      C* yp = yv.data();
      // A Linear layer (float, transB=1) runs GemmNT (gemm_nt.h): no packing, and a C that is one
      // row is added per column in its epilogue instead of being copied into Y first.
      bool nt = false;
      if constexpr (std::is_same_v<C, float>) nt = !d.trans_a && d.trans_b && GemmNTApplies(d.k);
      const bool row_bias = nt && beta != 0.0 && cs[0] == 0 && cs[1] == 1;
      std::optional<InView<C>> cv;
      if (beta != 0.0) cv.emplace(*c);
      if (beta != 0.0 && !row_bias) {
        for (int64_t i = 0; i < d.m; ++i)
          for (int64_t j = 0; j < d.n; ++j) yp[i * d.n + j] = (*cv)[i * cs[0] + j * cs[1]];
      }
      if constexpr (std::is_same_v<C, float>) {
        if (nt) {
          GemmNT(d.m, d.n, d.k, static_cast<float>(alpha), av.data(), lda, bv.data(), ldb,
                 row_bias ? cv->data() : nullptr, static_cast<float>(beta), beta != 0.0 && !row_bias, yp, d.n);
          return Status::Ok();
        }
      }
      memopt::Gemm(d.trans_a, d.trans_b, d.m, d.n, d.k, static_cast<C>(alpha), av.data(), lda, bv.data(), ldb,
                   static_cast<C>(beta), yp, d.n);
      return Status::Ok();
    });
  }
  Status st = DispatchInt(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* ap = a.data<T>();
    const T* bp = b.data<T>();
    T* yp = y.data<T>();
    for (int64_t i = 0; i < d.m; ++i) {
      for (int64_t j = 0; j < d.n; ++j) {
        T acc = 0;
        for (int64_t kk = 0; kk < d.k; ++kk) {
          const T av = d.trans_a ? ap[kk * lda + i] : ap[i * lda + kk];
          const T bv = d.trans_b ? bp[j * ldb + kk] : bp[kk * ldb + j];
          acc += av * bv;
        }
        double v = alpha * static_cast<double>(acc);
        if (beta != 0.0) v += beta * c->GetAsDouble(i * cs[0] + j * cs[1]);
        yp[i * d.n + j] = static_cast<T>(v);
      }
    }
  });
  if (!st.ok()) return UnsupportedDtype(ctx, a.dtype());
  return Status::Ok();
}

}  // namespace

static void RegisterGemmKernels(OpRegistry& r) {
  std::vector<DataType> types = FloatTypes();
  for (DataType t : {DataType::kInt32, DataType::kInt64, DataType::kUint32, DataType::kUint64}) types.push_back(t);
  r.SetCpuKernel("", "Gemm", Gemm, types);
}

}  // namespace memopt::math

MEMOPT_OPS(matmul, gemm_cpu) {
  memopt::math::RegisterGemmKernels(ops);
}
