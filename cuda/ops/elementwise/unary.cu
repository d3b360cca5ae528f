// Device code of ops/elementwise/unary.cc: Neg and Exp, one element per thread in float (the CPU
// kernels compute float16/bfloat16 in float too and round once).
#include "common.cuh"
#include "unary_launch.h"

namespace memopt::cuda {
namespace {

template <typename T>
__global__ void UnaryKernel(UnaryOp op, const T* x, T* y, int64_t n) {
  using E = Elem<T>;
  MEMOPT_GRID_STRIDE(i, n) {
    const float v = E::Load(x[i]);
    y[i] = E::Store(op == UnaryOp::kNeg ? -v : expf(v));
  }
}

template <typename T>
cudaError_t Launch(UnaryOp op, const void* x, void* y, int64_t n, cudaStream_t s) {
  if (n == 0) return cudaSuccess;
  UnaryKernel<T><<<BlocksFor(n), kThreads, 0, s>>>(op, static_cast<const T*>(x), static_cast<T*>(y), n);
  return cudaGetLastError();
}

}  // namespace

cudaError_t LaunchUnary(UnaryOp op, ElemType t, const void* x, void* y, int64_t n, cudaStream_t stream) {
  switch (t) {
    case ElemType::kF32: return Launch<float>(op, x, y, n, stream);
    case ElemType::kF16: return Launch<F16>(op, x, y, n, stream);
    case ElemType::kBF16: return Launch<BF16>(op, x, y, n, stream);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace memopt::cuda
