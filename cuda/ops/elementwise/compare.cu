// Device code of ops/elementwise/compare.cc: Equal with broadcasting, one output element per
// thread (the broadcast description travels by value as a kernel parameter).
#include "common.cuh"
#include "compare_launch.h"

namespace memopt::cuda {
namespace {

template <typename T>
__global__ void EqualKernel(const T* a, const T* b, bool* y, int64_t n, bool broadcast, BroadcastShape bc) {
  using E = Elem<T>;
  MEMOPT_GRID_STRIDE(i, n) {
    int64_t ia = i, ib = i;
    if (broadcast) {
      int64_t rest = i;
      ia = ib = 0;
      for (int d = bc.rank - 1; d >= 0; --d) {
        const int64_t coord = rest % bc.out_dims[d];
        rest /= bc.out_dims[d];
        ia += coord * bc.a_strides[d];
        ib += coord * bc.b_strides[d];
      }
    }
    y[i] = E::Load(a[ia]) == E::Load(b[ib]);
  }
}

template <typename T>
cudaError_t Launch(const void* a, const void* b, bool* y, int64_t n, const BroadcastShape* bc, cudaStream_t s) {
  if (n == 0) return cudaSuccess;
  EqualKernel<T><<<BlocksFor(n), kThreads, 0, s>>>(static_cast<const T*>(a), static_cast<const T*>(b), y, n,
                                                  bc != nullptr, bc != nullptr ? *bc : BroadcastShape{});
  return cudaGetLastError();
}

}  // namespace

cudaError_t LaunchEqual(ElemType t, const void* a, const void* b, bool* y, int64_t n, const BroadcastShape* bc,
                        cudaStream_t stream) {
  switch (t) {
    case ElemType::kF32: return Launch<float>(a, b, y, n, bc, stream);
    case ElemType::kF16: return Launch<F16>(a, b, y, n, bc, stream);
    case ElemType::kBF16: return Launch<BF16>(a, b, y, n, bc, stream);
    case ElemType::kI32: return Launch<int32_t>(a, b, y, n, bc, stream);
    case ElemType::kI64: return Launch<int64_t>(a, b, y, n, bc, stream);
    case ElemType::kBool: return Launch<bool>(a, b, y, n, bc, stream);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace memopt::cuda
