// Device helpers shared by the .cu kernels: element loads and stores through the compute type
// (float for float/float16/bfloat16, as the CPU reference computes), using the same rounding
// functions as the CPU (util/half.h), and the launch geometry of the grid-stride loops.
#pragma once

#include <cstdint>
#include <initializer_list>

#include "exec/math/host_device.h"
#include "launch.h"
#include "util/element.h"
#include "util/half.h"

namespace memopt::cuda {

/// Storage of float16/bfloat16 elements: their 16-bit patterns, the CPU kernels' types.
using F16 = Half;
using BF16 = BFloat16;

template <typename T>
struct Elem {  // float, double, int32, int64, bool: the value itself
  using Compute = T;
  __device__ static Compute Load(T v) { return v; }
  __device__ static T Store(Compute v) { return v; }
};
template <>
struct Elem<F16> {
  using Compute = float;
  __device__ static float Load(F16 v) { return Float16ToFloat(v.bits); }
  __device__ static F16 Store(float v) { return F16{FloatToFloat16(v)}; }
};
template <>
struct Elem<BF16> {
  using Compute = float;
  __device__ static float Load(BF16 v) { return Bfloat16ToFloat(v.bits); }
  __device__ static BF16 Store(float v) { return BF16{FloatToBfloat16(v)}; }
};

constexpr int kThreads = 256;
/// Blocks of a grid-stride loop over n elements (capped: each thread loops over the rest).
inline unsigned BlocksFor(int64_t n) {
  const int64_t blocks = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks < 65536 ? blocks : 65536);
}

#define MEMOPT_GRID_STRIDE(i, n) MEMOPT_GRID_STRIDE_FROM(i, 0, n)
/// The grid-stride loop over [begin, n): the scalar tail after the packed kernels below.
#define MEMOPT_GRID_STRIDE_FROM(i, begin, n)                                                       \
  for (int64_t i = (begin) + static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < (n); \
       i += static_cast<int64_t>(blockDim.x) * gridDim.x)

/// Elements of T in one 16-byte access (8 float16/bfloat16, 4 float): the packed elementwise
/// kernels load and store a Pack per thread, then the scalar kernel does the tail.
template <typename T>
constexpr int kPack = 16 / static_cast<int>(sizeof(T));
template <typename T>
struct alignas(16) Pack {
  T v[kPack<T>];
};
/// True when every pointer (nullptr counts) is a multiple of `alignment` bytes.
inline bool AlignedTo(size_t alignment, std::initializer_list<const void*> ptrs) {
  for (const void* p : ptrs) {
    if (reinterpret_cast<uintptr_t>(p) % alignment != 0) return false;
  }
  return true;
}
/// True when every pointer (nullptr counts) can be read as Packs.
inline bool Aligned16(std::initializer_list<const void*> ptrs) { return AlignedTo(16, ptrs); }

/// N consecutive elements of T in one access of N * sizeof(T) bytes (a power of two up to 16).
template <typename T, int N>
struct alignas(N * sizeof(T)) VecN {
  T v[N];
};
/// Bytes a pointer must be a multiple of for LoadFloats/StoreFloats of N elements.
template <typename T, int N>
constexpr size_t kVecAlign = N * sizeof(T) < 16 ? N * sizeof(T) : 16;

/// out[j] = p[j] in float for j < N: accesses of up to 16 bytes (p: kVecAlign<T, N> aligned).
template <typename T, int N>
__device__ inline void LoadFloats(const T* p, float* out) {
  if constexpr (N * sizeof(T) <= 16) {
    const VecN<T, N> in = *reinterpret_cast<const VecN<T, N>*>(p);
#pragma unroll
    for (int j = 0; j < N; ++j) out[j] = static_cast<float>(Elem<T>::Load(in.v[j]));
  } else {
    constexpr int kPart = 16 / static_cast<int>(sizeof(T));
#pragma unroll
    for (int k = 0; k < N / kPart; ++k) LoadFloats<T, kPart>(p + k * kPart, out + k * kPart);
  }
}
/// p[j] = in[j] rounded to T for j < N, as LoadFloats.
template <typename T, int N>
__device__ inline void StoreFloats(T* p, const float* in) {
  if constexpr (N * sizeof(T) <= 16) {
    VecN<T, N> out;
#pragma unroll
    for (int j = 0; j < N; ++j) out.v[j] = Elem<T>::Store(in[j]);
    *reinterpret_cast<VecN<T, N>*>(p) = out;
  } else {
    constexpr int kPart = 16 / static_cast<int>(sizeof(T));
#pragma unroll
    for (int k = 0; k < N / kPart; ++k) StoreFloats<T, kPart>(p + k * kPart, in + k * kPart);
  }
}
/// The whole Packs of n elements when every pointer is 16-byte aligned, else 0 (all elements then
/// go to the scalar kernel).
template <typename T>
int64_t PacksFor(int64_t n, std::initializer_list<const void*> ptrs) {
  return Aligned16(ptrs) ? n / kPack<T> : 0;
}

}  // namespace memopt::cuda
