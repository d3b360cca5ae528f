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
/// True when every pointer (nullptr counts) can be read as Packs.
inline bool Aligned16(std::initializer_list<const void*> ptrs) {
  for (const void* p : ptrs) {
    if (reinterpret_cast<uintptr_t>(p) % 16 != 0) return false;
  }
  return true;
}
/// The whole Packs of n elements when every pointer is 16-byte aligned, else 0 (all elements then
/// go to the scalar kernel).
template <typename T>
int64_t PacksFor(int64_t n, std::initializer_list<const void*> ptrs) {
  return Aligned16(ptrs) ? n / kPack<T> : 0;
}

}  // namespace memopt::cuda
