// Device code of ops/elementwise/bias_add.cc: one pass over X and skip with the bias row from L1.
// When every pointer is 16-byte aligned and a row holds whole Packs, each thread moves one Pack
// (16 bytes) of X, skip and Y and the matching Pack of the bias; otherwise one element per thread.
#include "bias_add_launch.h"
#include "common.cuh"

namespace memopt::cuda {
namespace {

template <typename T>
__global__ void BiasAddPacked(const Pack<T>* x, const Pack<T>* bias, const Pack<T>* skip, Pack<T>* y, int64_t packs,
                              int64_t bias_packs) {
  using E = Elem<T>;
  MEMOPT_GRID_STRIDE(i, packs) {
    const Pack<T> a = x[i], b = bias[i % bias_packs], s = skip[i];
    Pack<T> out;
#pragma unroll
    for (int j = 0; j < kPack<T>; ++j) {
      out.v[j] = E::Store(__fadd_rn(__fadd_rn(E::Load(a.v[j]), E::Load(b.v[j])), E::Load(s.v[j])));
    }
    y[i] = out;
  }
}

template <typename T>
__global__ void BiasAddScalar(const T* x, const T* bias, const T* skip, T* y, int64_t n, int64_t channels) {
  using E = Elem<T>;
  MEMOPT_GRID_STRIDE(i, n) {
    y[i] = E::Store(__fadd_rn(__fadd_rn(E::Load(x[i]), E::Load(bias[i % channels])), E::Load(skip[i])));
  }
}

template <typename T>
cudaError_t Launch(const void* xv, const void* bv, const void* sv, void* yv, int64_t rows, int64_t channels,
                   cudaStream_t s) {
  const int64_t n = rows * channels;
  if (n == 0) return cudaSuccess;
  const T* x = static_cast<const T*>(xv);
  const T* bias = static_cast<const T*>(bv);
  const T* skip = static_cast<const T*>(sv);
  T* y = static_cast<T*>(yv);
  if (channels % kPack<T> == 0 && Aligned16({x, bias, skip, y})) {
    const int64_t packs = n / kPack<T>;
    BiasAddPacked<T><<<BlocksFor(packs), kThreads, 0, s>>>(
        reinterpret_cast<const Pack<T>*>(x), reinterpret_cast<const Pack<T>*>(bias),
        reinterpret_cast<const Pack<T>*>(skip), reinterpret_cast<Pack<T>*>(y), packs, channels / kPack<T>);
  } else {
    BiasAddScalar<T><<<BlocksFor(n), kThreads, 0, s>>>(x, bias, skip, y, n, channels);
  }
  return cudaGetLastError();
}

}  // namespace

cudaError_t LaunchBiasAdd(ElemType t, const void* x, const void* bias, const void* skip, void* y, int64_t rows,
                          int64_t channels, cudaStream_t stream) {
  switch (t) {
    case ElemType::kF32:
      return Launch<float>(x, bias, skip, y, rows, channels, stream);
    case ElemType::kF16:
      return Launch<F16>(x, bias, skip, y, rows, channels, stream);
    case ElemType::kBF16:
      return Launch<BF16>(x, bias, skip, y, rows, channels, stream);
    default:
      return cudaErrorInvalidValue;
  }
}

}  // namespace memopt::cuda
