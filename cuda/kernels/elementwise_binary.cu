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

template <typename T>
__global__ void SameShapeKernel(BinaryOp op, const T* a, const T* b, T* y, int64_t n) {
  using E = Elem<T>;
  MEMOPT_GRID_STRIDE(i, n) {
    y[i] = E::Store(Apply(op, E::Load(a[i]), op == BinaryOp::kCopyA ? E::Load(a[i]) : E::Load(b[i])));
  }
}

// The broadcast description travels by value (kernel parameter space), no device copy needed.
template <typename T>
__global__ void BroadcastKernel(BinaryOp op, const T* a, const T* b, T* y, int64_t n, BroadcastShape bc) {
  using E = Elem<T>;
  MEMOPT_GRID_STRIDE(i, n) {
    int64_t rest = i, ia = 0, ib = 0;
    for (int d = bc.rank - 1; d >= 0; --d) {
      const int64_t coord = rest % bc.out_dims[d];
      rest /= bc.out_dims[d];
      ia += coord * bc.a_strides[d];
      ib += coord * bc.b_strides[d];
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
    SameShapeKernel<T><<<BlocksFor(n), kThreads, 0, stream>>>(op, pa, pb, py, n);
  } else {
    BroadcastKernel<T><<<BlocksFor(n), kThreads, 0, stream>>>(op, pa, pb, py, n, *bc);
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
