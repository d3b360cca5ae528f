// Cast between float32, float16, bfloat16, float64, int32, int64 and bool, by the CPU Cast's
// element conversion (util/element.h, ConvertElement). 49 tiny kernels, one per type pair.
#include <type_traits>

#include "common.cuh"

namespace memopt::cuda {
namespace {

template <typename S, typename D>
__global__ void CastKernel(const S* x, D* y, int64_t n) {
  MEMOPT_GRID_STRIDE(i, n) { y[i] = ConvertElement<D>(x[i]); }
}

template <typename S, typename D>
cudaError_t Launch(const void* x, void* y, int64_t n, cudaStream_t s) {
  if (n == 0) return cudaSuccess;
  CastKernel<S, D><<<BlocksFor(n), kThreads, 0, s>>>(static_cast<const S*>(x), static_cast<D*>(y), n);
  return cudaGetLastError();
}

template <typename S>
cudaError_t LaunchFrom(ElemType to, const void* x, void* y, int64_t n, cudaStream_t s) {
  switch (to) {
    case ElemType::kF32:
      return Launch<S, float>(x, y, n, s);
    case ElemType::kF16:
      return Launch<S, F16>(x, y, n, s);
    case ElemType::kBF16:
      return Launch<S, BF16>(x, y, n, s);
    case ElemType::kF64:
      return Launch<S, double>(x, y, n, s);
    case ElemType::kI32:
      return Launch<S, int32_t>(x, y, n, s);
    case ElemType::kI64:
      return Launch<S, int64_t>(x, y, n, s);
    case ElemType::kBool:
      return Launch<S, bool>(x, y, n, s);
  }
  return cudaErrorInvalidValue;
}

}  // namespace

cudaError_t LaunchCast(ElemType from, ElemType to, const void* x, void* y, int64_t n, cudaStream_t stream) {
  switch (from) {
    case ElemType::kF32:
      return LaunchFrom<float>(to, x, y, n, stream);
    case ElemType::kF16:
      return LaunchFrom<F16>(to, x, y, n, stream);
    case ElemType::kBF16:
      return LaunchFrom<BF16>(to, x, y, n, stream);
    case ElemType::kF64:
      return LaunchFrom<double>(to, x, y, n, stream);
    case ElemType::kI32:
      return LaunchFrom<int32_t>(to, x, y, n, stream);
    case ElemType::kI64:
      return LaunchFrom<int64_t>(to, x, y, n, stream);
    case ElemType::kBool:
      return LaunchFrom<bool>(to, x, y, n, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace memopt::cuda
