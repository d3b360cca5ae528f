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
    const bool packed = Aligned16(pa) && Aligned16(pb) && Aligned16(py);
    const int64_t packs = packed ? n / kPack<T> : 0;
    if (packs > 0) SameShapePacked<T><<<BlocksFor(packs), kThreads, 0, stream>>>(op, pa, pb, py, packs);
    const int64_t done = packs * kPack<T>;
    if (done < n) SameShapeKernel<T><<<BlocksFor(n - done), kThreads, 0, stream>>>(op, pa, pb, py, done, n);
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
