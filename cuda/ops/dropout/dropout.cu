// Device code of ops/dropout/dropout.cc. Each thread handles the four elements of one Philox block
// (exec/philox.h: block g covers elements 4g .. 4g+3), so a single Philox call per thread draws
// exactly the words the CPU reference draws for those elements, and the masks are bit-identical.
// The arithmetic follows the CPU kernel's order in float with explicit rounding intrinsics, so no
// fused multiply-add changes a result.
#include "common.cuh"
#include "exec/philox.h"
#include "dropout_launch.h"

namespace memopt::cuda {
namespace {

/// Four consecutive elements, aligned so that one vector load or store moves them.
template <typename T>
struct alignas(4 * sizeof(T)) Pack4 {
  T v[4];
};

template <typename T>
__device__ void Load4(const T* p, int64_t i0, int count, bool full, float* out) {
  using E = Elem<T>;
  if (full) {
    const Pack4<T> in = *reinterpret_cast<const Pack4<T>*>(p + i0);
#pragma unroll
    for (int j = 0; j < 4; ++j) out[j] = E::Load(in.v[j]);
  } else {
    for (int j = 0; j < count; ++j) out[j] = E::Load(p[i0 + j]);
  }
}

template <typename T>
__device__ void Store4(T* p, int64_t i0, int count, bool full, const float* v) {
  using E = Elem<T>;
  if (full) {
    Pack4<T> out;
#pragma unroll
    for (int j = 0; j < 4; ++j) out.v[j] = E::Store(v[j]);
    *reinterpret_cast<Pack4<T>*>(p + i0) = out;
  } else {
    for (int j = 0; j < count; ++j) p[i0 + j] = E::Store(v[j]);
  }
}

/// `vec`: every pointer is aligned for Pack4 access (and a bool mask for 4-byte stores).
template <typename T, DropoutMask kMask>
__global__ void __launch_bounds__(kThreads) DropoutKernel(DropoutParams p, bool vec) {
  using E = Elem<T>;
  const T* x = static_cast<const T*>(p.x);
  const T* bias = static_cast<const T*>(p.bias);
  const T* res = static_cast<const T*>(p.residual);
  T* y = static_cast<T*>(p.y);
  const int64_t groups = (p.n + 3) / 4;
  const int lane = static_cast<int>(threadIdx.x % 32);
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  // The loop runs per warp (g0 is the warp's first group, a multiple of 32), so every lane takes
  // part in the bitmask's shuffles and lanes 8w .. 8w+7 hold the eight blocks of one mask word.
  for (int64_t g0 = static_cast<int64_t>(blockIdx.x) * blockDim.x + (threadIdx.x - lane); g0 < groups; g0 += stride) {
    const int64_t g = g0 + lane;
    uint32_t bits = 0;
    if (g < groups) {
      const int64_t i0 = 4 * g;
      const int count = p.n - i0 < 4 ? static_cast<int>(p.n - i0) : 4;
      const bool full = vec && count == 4;
      bool keep[4] = {true, true, true, true};
      if (p.random) {
        const Philox4x32 r = DropoutRandomBlock(p.seed, static_cast<uint64_t>(g));
#pragma unroll
        for (int j = 0; j < 4; ++j) keep[j] = PhiloxUniform(r.v[j]) < p.keep_probability;
      }
      float v[4] = {0.0f, 0.0f, 0.0f, 0.0f};
      Load4(x, i0, count, full, v);
      if (bias != nullptr) {
        int64_t b = i0 % p.nbias;  // one division per block; then step with wrap-around
        for (int j = 0; j < count; ++j) {
          v[j] = __fadd_rn(v[j], E::Load(bias[b]));
          if (++b == p.nbias) b = 0;
        }
      }
      if (p.random) {
#pragma unroll
        for (int j = 0; j < 4; ++j) v[j] = keep[j] ? __fmul_rn(v[j], p.scale) : 0.0f;
      }
      if (res != nullptr) {
        float r[4] = {0.0f, 0.0f, 0.0f, 0.0f};
        Load4(res, i0, count, full, r);
#pragma unroll
        for (int j = 0; j < 4; ++j) v[j] = __fadd_rn(v[j], r[j]);
      }
      Store4(y, i0, count, full, v);
      if constexpr (kMask == DropoutMask::kBool) {
        uint8_t* m = static_cast<uint8_t*>(p.mask);
        if (full) {
          uint32_t word = 0;
#pragma unroll
          for (int j = 0; j < 4; ++j) word |= (keep[j] ? 1u : 0u) << (8 * j);  // little-endian bytes
          *reinterpret_cast<uint32_t*>(m + i0) = word;
        } else {
          for (int j = 0; j < count; ++j) m[i0 + j] = keep[j] ? 1 : 0;
        }
      } else if constexpr (kMask == DropoutMask::kData) {
        float mv[4];
#pragma unroll
        for (int j = 0; j < 4; ++j) mv[j] = keep[j] ? 1.0f : 0.0f;
        Store4(static_cast<T*>(p.mask), i0, count, full, mv);
      }
      // Elements past n leave their bits 0 (the CPU's padding).
      for (int j = 0; j < count; ++j) bits |= (keep[j] ? 1u : 0u) << j;
    }
    if constexpr (kMask == DropoutMask::kBitmask) {
      // Block g holds bits 4 * (g % 8) .. +3 of word g / 8; OR the group of eight lanes together.
      bits <<= 4 * (lane & 7);
      bits |= __shfl_xor_sync(0xffffffffu, bits, 1);
      bits |= __shfl_xor_sync(0xffffffffu, bits, 2);
      bits |= __shfl_xor_sync(0xffffffffu, bits, 4);
      if ((lane & 7) == 0 && g < groups) static_cast<uint32_t*>(p.mask)[g / 8] = bits;
    }
  }
}

template <typename T, bool kBitmask>
__global__ void __launch_bounds__(kThreads)
    DropoutGradKernel(const T* dy, const void* mask, float scale, T* dx, int64_t n, bool vec) {
  const int64_t groups = (n + 3) / 4;
  MEMOPT_GRID_STRIDE(g, groups) {
    const int64_t i0 = 4 * g;
    const int count = n - i0 < 4 ? static_cast<int>(n - i0) : 4;
    const bool full = vec && count == 4;
    uint32_t bits = 0;
    if constexpr (kBitmask) {
      bits = (static_cast<const uint32_t*>(mask)[g / 8] >> (4 * (g % 8))) & 0xFu;
    } else {
      const uint8_t* m = static_cast<const uint8_t*>(mask);
      if (full) {
        const uint32_t word = *reinterpret_cast<const uint32_t*>(m + i0);
#pragma unroll
        for (int j = 0; j < 4; ++j) bits |= ((word >> (8 * j)) & 0xFFu) != 0 ? 1u << j : 0u;
      } else {
        for (int j = 0; j < count; ++j) bits |= m[i0 + j] != 0 ? 1u << j : 0u;
      }
    }
    float v[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    Load4(dy, i0, count, full, v);
#pragma unroll
    for (int j = 0; j < 4; ++j) v[j] = (bits >> j) & 1u ? __fmul_rn(v[j], scale) : 0.0f;
    Store4(dx, i0, count, full, v);
  }
}

bool Aligned(const void* p, size_t alignment) { return reinterpret_cast<uintptr_t>(p) % alignment == 0; }

template <typename T>
cudaError_t LaunchTyped(DropoutMask mask, const DropoutParams& p, cudaStream_t s) {
  if (p.n == 0) return cudaSuccess;
  const size_t a = sizeof(Pack4<T>);
  bool vec = Aligned(p.x, a) && Aligned(p.y, a) && (p.residual == nullptr || Aligned(p.residual, a));
  if (mask == DropoutMask::kBool) vec = vec && Aligned(p.mask, 4);
  if (mask == DropoutMask::kData) vec = vec && Aligned(p.mask, a);
  const unsigned blocks = BlocksFor((p.n + 3) / 4);
  switch (mask) {
    case DropoutMask::kNone: DropoutKernel<T, DropoutMask::kNone><<<blocks, kThreads, 0, s>>>(p, vec); break;
    case DropoutMask::kBool: DropoutKernel<T, DropoutMask::kBool><<<blocks, kThreads, 0, s>>>(p, vec); break;
    case DropoutMask::kData: DropoutKernel<T, DropoutMask::kData><<<blocks, kThreads, 0, s>>>(p, vec); break;
    case DropoutMask::kBitmask: DropoutKernel<T, DropoutMask::kBitmask><<<blocks, kThreads, 0, s>>>(p, vec); break;
  }
  return cudaGetLastError();
}

template <typename T>
cudaError_t LaunchGradTyped(bool bitmask, const void* dy, const void* mask, float scale, void* dx, int64_t n,
                            cudaStream_t s) {
  if (n == 0) return cudaSuccess;
  const size_t a = sizeof(Pack4<T>);
  const bool vec = Aligned(dy, a) && Aligned(dx, a) && (bitmask || Aligned(mask, 4));
  const unsigned blocks = BlocksFor((n + 3) / 4);
  const T* g = static_cast<const T*>(dy);
  T* out = static_cast<T*>(dx);
  if (bitmask) {
    DropoutGradKernel<T, true><<<blocks, kThreads, 0, s>>>(g, mask, scale, out, n, vec);
  } else {
    DropoutGradKernel<T, false><<<blocks, kThreads, 0, s>>>(g, mask, scale, out, n, vec);
  }
  return cudaGetLastError();
}

}  // namespace

cudaError_t LaunchDropout(ElemType t, DropoutMask mask, const DropoutParams& p, cudaStream_t stream) {
  switch (t) {
    case ElemType::kF32: return LaunchTyped<float>(mask, p, stream);
    case ElemType::kF16: return LaunchTyped<F16>(mask, p, stream);
    case ElemType::kBF16: return LaunchTyped<BF16>(mask, p, stream);
    default: return cudaErrorInvalidValue;
  }
}

cudaError_t LaunchDropoutGrad(ElemType t, bool bitmask, const void* dy, const void* mask, float scale, void* dx,
                              int64_t n, cudaStream_t stream) {
  switch (t) {
    case ElemType::kF32: return LaunchGradTyped<float>(bitmask, dy, mask, scale, dx, n, stream);
    case ElemType::kF16: return LaunchGradTyped<F16>(bitmask, dy, mask, scale, dx, n, stream);
    case ElemType::kBF16: return LaunchGradTyped<BF16>(bitmask, dy, mask, scale, dx, n, stream);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace memopt::cuda
