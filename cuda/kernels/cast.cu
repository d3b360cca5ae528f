// Cast between float32, float16, bfloat16, float64, int32, int64 and bool, with the CPU Cast's
// rules (elementwise_cast.cc): float sources are read in their compute type (float or double),
// half types are rounded from float, float -> int truncates and wraps through int64 (NaN -> 0,
// beyond int64 saturates), anything -> bool is `!= 0`. 49 tiny kernels, one per type pair.
#include <type_traits>

#include "common.cuh"

namespace memopt::cuda {
namespace {

template <typename T>
constexpr bool kFloatStorage = std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, F16> ||
                               std::is_same_v<T, BF16>;

/// The CPU's StoreAs: half types through float, bool as != 0, others a C++ conversion.
template <typename D, typename V>
__device__ D StoreAs(V v) {
  if constexpr (std::is_same_v<D, F16>) {
    return F16{FloatToFloat16(static_cast<float>(v))};
  } else if constexpr (std::is_same_v<D, BF16>) {
    return BF16{FloatToBfloat16(static_cast<float>(v))};
  } else if constexpr (std::is_same_v<D, bool>) {
    return v != V(0);
  } else {
    return static_cast<D>(v);
  }
}

template <typename D>
__device__ D FloatToInt(double v) {
  if (v != v) return D(0);  // NaN
  const double t = trunc(v);
  if (t >= -9223372036854775808.0 && t < 9223372036854775808.0) return static_cast<D>(static_cast<int64_t>(t));
  return t < 0 ? (std::is_same_v<D, int32_t> ? D(INT32_MIN) : D(INT64_MIN))
               : (std::is_same_v<D, int32_t> ? D(INT32_MAX) : D(INT64_MAX));
}

template <typename D, typename S>
__device__ D Convert(S v) {
  if constexpr (kFloatStorage<S>) {
    const auto f = Elem<S>::Load(v);
    if constexpr (kFloatStorage<D>) {
      return StoreAs<D>(f);
    } else if constexpr (std::is_same_v<D, bool>) {
      return f != 0;
    } else {
      return FloatToInt<D>(static_cast<double>(f));
    }
  } else if constexpr (std::is_same_v<D, bool>) {
    return v != S(0);
  } else {
    return StoreAs<D>(v);
  }
}

template <typename S, typename D>
__global__ void CastKernel(const S* x, D* y, int64_t n) {
  MEMOPT_GRID_STRIDE(i, n) { y[i] = Convert<D>(x[i]); }
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
    case ElemType::kF32: return Launch<S, float>(x, y, n, s);
    case ElemType::kF16: return Launch<S, F16>(x, y, n, s);
    case ElemType::kBF16: return Launch<S, BF16>(x, y, n, s);
    case ElemType::kF64: return Launch<S, double>(x, y, n, s);
    case ElemType::kI32: return Launch<S, int32_t>(x, y, n, s);
    case ElemType::kI64: return Launch<S, int64_t>(x, y, n, s);
    case ElemType::kBool: return Launch<S, bool>(x, y, n, s);
  }
  return cudaErrorInvalidValue;
}

}  // namespace

cudaError_t LaunchCast(ElemType from, ElemType to, const void* x, void* y, int64_t n, cudaStream_t stream) {
  switch (from) {
    case ElemType::kF32: return LaunchFrom<float>(to, x, y, n, stream);
    case ElemType::kF16: return LaunchFrom<F16>(to, x, y, n, stream);
    case ElemType::kBF16: return LaunchFrom<BF16>(to, x, y, n, stream);
    case ElemType::kF64: return LaunchFrom<double>(to, x, y, n, stream);
    case ElemType::kI32: return LaunchFrom<int32_t>(to, x, y, n, stream);
    case ElemType::kI64: return LaunchFrom<int64_t>(to, x, y, n, stream);
    case ElemType::kBool: return LaunchFrom<bool>(to, x, y, n, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace memopt::cuda
