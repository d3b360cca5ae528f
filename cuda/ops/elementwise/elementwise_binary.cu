// Broadcasting Add/Sub/Mul/Div (and the broadcast copy Gemm uses for its C input), computed in
// float for float16/bfloat16 and rounded on store, like the CPU reference. One kernel per element
// type; the op is a runtime switch (uniform across the grid) to keep instantiations few.
#include "common.cuh"

namespace memopt::cuda {
namespace {

template <typename C>
__device__ C Apply(BinaryOp op, C a, C b) {
  switch (op) {
    case BinaryOp::kAdd: return a + b;
    case BinaryOp::kSub: return a - b;
    case BinaryOp::kMul: return a * b;
    case BinaryOp::kDiv: return a / b;
    case BinaryOp::kCopyA: return a;
  }
  return a;
}

/// Same shape, elements [begin, n): all of them, or the tail after SameShapePacked.
template <typename T>
__global__ void SameShapeKernel(BinaryOp op, const T* a, const T* b, T* y, int64_t begin, int64_t n) {
  using E = Elem<T>;
  MEMOPT_GRID_STRIDE_FROM(i, begin, n) {
    y[i] = E::Store(Apply(op, E::Load(a[i]), op == BinaryOp::kCopyA ? E::Load(a[i]) : E::Load(b[i])));
  }
}

/// Same shape, a Pack of elements per thread (a, b and y 16-byte aligned).
template <typename T>
__global__ void SameShapePacked(BinaryOp op, const T* a, const T* b, T* y, int64_t packs) {
  using E = Elem<T>;
  using P = Pack<T>;
  MEMOPT_GRID_STRIDE(p, packs) {
    const P pa = reinterpret_cast<const P*>(a)[p];
    const P pb = op == BinaryOp::kCopyA ? pa : reinterpret_cast<const P*>(b)[p];
    P out;
#pragma unroll
    for (int k = 0; k < kPack<T>; ++k) out.v[k] = E::Store(Apply(op, E::Load(pa.v[k]), E::Load(pb.v[k])));
    reinterpret_cast<P*>(y)[p] = out;
  }
}

/// One operand is the whole output and the other repeats along it with `period` elements (a scalar,
/// a bias row, an attention mask): the repeating one's element i % period, a Pack per thread
/// (period 1 or a multiple of the Pack; all pointers 16-byte aligned). For kCopyA the repeating
/// operand is a and the full one is not read.
template <typename T>
__global__ void PeriodicPacked(BinaryOp op, const T* full, const T* part, int64_t period, bool part_is_b, T* y,
                               int64_t packs) {
  using E = Elem<T>;
  using P = Pack<T>;
  const float scalar = period == 1 ? E::Load(part[0]) : 0.0f;
  MEMOPT_GRID_STRIDE(p, packs) {
    const P pf = op == BinaryOp::kCopyA ? P{} : reinterpret_cast<const P*>(full)[p];
    P pp{};
    if (period != 1) pp = *reinterpret_cast<const P*>(part + (p * kPack<T>) % period);
    P out;
#pragma unroll
    for (int k = 0; k < kPack<T>; ++k) {
      const float f = E::Load(pf.v[k]), q = period == 1 ? scalar : E::Load(pp.v[k]);
      out.v[k] = E::Store(part_is_b ? Apply(op, f, q) : Apply(op, q, f));
    }
    reinterpret_cast<P*>(y)[p] = out;
  }
}

/// PeriodicPacked's elements [begin, n) one per thread: its tail, or all of them.
template <typename T>
__global__ void PeriodicKernel(BinaryOp op, const T* full, const T* part, int64_t period, bool part_is_b, T* y,
                               int64_t begin, int64_t n) {
  using E = Elem<T>;
  MEMOPT_GRID_STRIDE_FROM(i, begin, n) {
    const auto f = op == BinaryOp::kCopyA ? typename E::Compute{} : E::Load(full[i]);
    const auto q = E::Load(part[i % period]);
    y[i] = E::Store(part_is_b ? Apply(op, f, q) : Apply(op, q, f));
  }
}

/// The period of an operand of `bc` with `strides` that repeats along the output (0 on the leading
/// dims, the output's contiguous strides on the trailing ones), or 0 when it does not.
int64_t PeriodOf(const BroadcastShape& bc, const int64_t* strides) {
  int64_t contiguous = 1;
  int d = bc.rank - 1;
  for (; d >= 0 && strides[d] == contiguous; --d) contiguous *= bc.out_dims[d];
  for (; d >= 0; --d) {
    if (strides[d] != 0) return 0;
  }
  return contiguous;
}

// The broadcast description travels by value (kernel parameter space), no device copy needed.
// I: the index arithmetic's type, 32-bit when every index fits (a 64-bit division costs several
// times a 32-bit one, and there are two per dim and element).
template <typename T, typename I>
__global__ void BroadcastKernel(BinaryOp op, const T* a, const T* b, T* y, int64_t n, BroadcastShape bc) {
  using E = Elem<T>;
  MEMOPT_GRID_STRIDE(i, n) {
    I rest = static_cast<I>(i), ia = 0, ib = 0;
    for (int d = bc.rank - 1; d >= 0; --d) {
      const I dim = static_cast<I>(bc.out_dims[d]);
      const I coord = rest % dim;
      rest /= dim;
      ia += coord * static_cast<I>(bc.a_strides[d]);
      ib += coord * static_cast<I>(bc.b_strides[d]);
    }
    const auto va = E::Load(a[ia]);
    y[i] = E::Store(Apply(op, va, op == BinaryOp::kCopyA ? va : E::Load(b[ib])));
  }
}

template <typename T>
cudaError_t Launch(BinaryOp op, const void* a, const void* b, void* y, int64_t n, const BroadcastShape* bc,
                   cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  const auto* pa = static_cast<const T*>(a);
  const auto* pb = static_cast<const T*>(b);
  auto* py = static_cast<T*>(y);
  if (bc == nullptr) {
    const int64_t packs = PacksFor<T>(n, {pa, pb, py});
    if (packs > 0) SameShapePacked<T><<<BlocksFor(packs), kThreads, 0, stream>>>(op, pa, pb, py, packs);
    const int64_t done = packs * kPack<T>;
    if (done < n) SameShapeKernel<T><<<BlocksFor(n - done), kThreads, 0, stream>>>(op, pa, pb, py, done, n);
    return cudaGetLastError();
  }
  // One operand whole (its period is the output's size), the other repeating.
  const int64_t period_a = PeriodOf(*bc, bc->a_strides), period_b = PeriodOf(*bc, bc->b_strides);
  const bool a_repeats = period_a > 0 && (op == BinaryOp::kCopyA || period_b == n);
  const bool b_repeats = !a_repeats && period_b > 0 && period_a == n;
  if (a_repeats || b_repeats) {
    const T* full = a_repeats ? pb : pa;
    const T* part = a_repeats ? pa : pb;
    const int64_t period = a_repeats ? period_a : period_b;
    const int64_t packs = period == 1 || period % kPack<T> == 0 ? PacksFor<T>(n, {full, part, py}) : 0;
    if (packs > 0) {
      PeriodicPacked<T><<<BlocksFor(packs), kThreads, 0, stream>>>(op, full, part, period, b_repeats, py, packs);
    }
    const int64_t done = packs * kPack<T>;
    if (done < n) {
      PeriodicKernel<T><<<BlocksFor(n - done), kThreads, 0, stream>>>(op, full, part, period, b_repeats, py, done, n);
    }
  } else if (n <= 0xffffffffLL) {
    BroadcastKernel<T, uint32_t><<<BlocksFor(n), kThreads, 0, stream>>>(op, pa, pb, py, n, *bc);
  } else {
    BroadcastKernel<T, int64_t><<<BlocksFor(n), kThreads, 0, stream>>>(op, pa, pb, py, n, *bc);
  }
  return cudaGetLastError();
}

}  // namespace

cudaError_t LaunchBinary(BinaryOp op, ElemType t, const void* a, const void* b, void* y, int64_t n,
                         const BroadcastShape* bc, cudaStream_t stream) {
  switch (t) {
    case ElemType::kF32: return Launch<float>(op, a, b, y, n, bc, stream);
    case ElemType::kF16: return Launch<F16>(op, a, b, y, n, bc, stream);
    case ElemType::kBF16: return Launch<BF16>(op, a, b, y, n, bc, stream);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace memopt::cuda
