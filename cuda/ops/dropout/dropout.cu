// Device code of ops/dropout/dropout.cc. Each thread handles whole Philox blocks (exec/philox.h:
// block g covers elements 4g .. 4g+3; two blocks per thread for the 16-bit types, so each access
// moves 16 bytes), so the threads draw exactly the words the CPU reference draws for their
// elements, and the masks are bit-identical.
// The arithmetic follows the CPU kernel's order in float with explicit rounding intrinsics, so no
// fused multiply-add changes a result.
#include "common.cuh"
#include "exec/philox.h"
#include "dropout_launch.h"

namespace memopt::cuda {
namespace {

/// Philox blocks per thread: two for the 16-bit types, so that every access moves 16 bytes (8
/// elements), one for float (4 elements, 16 bytes).
template <typename T>
constexpr int kBlocksPerThread = sizeof(T) == 2 ? 2 : 1;

/// out[j] = p[i0 + j] for j < count (all kE when `full`: one access). The loops run over the fixed
/// bound with `j < count` tests, so the arrays stay in registers.
template <typename T, int kE>
__device__ void LoadUnit(const T* p, int64_t i0, int count, bool full, float (&out)[kE]) {
  if (full) {
    LoadFloats<T, kE>(p + i0, out);
    return;
  }
#pragma unroll
  for (int j = 0; j < kE; ++j) {
    if (j < count) out[j] = Elem<T>::Load(p[i0 + j]);
  }
}

template <typename T, int kE>
__device__ void StoreUnit(T* p, int64_t i0, int count, bool full, const float (&v)[kE]) {
  if (full) {
    StoreFloats<T, kE>(p + i0, v);
    return;
  }
#pragma unroll
  for (int j = 0; j < kE; ++j) {
    if (j < count) p[i0 + j] = Elem<T>::Store(v[j]);
  }
}

/// Thread unit u covers Philox blocks kB*u .. kB*u+kB-1, elements kE*u .. kE*u+kE-1 (kE = 4 kB).
/// `vec`: every pointer is aligned for one access per unit (a bool mask: kE bytes).
template <typename T, DropoutMask kMask>
__global__ void __launch_bounds__(kThreads) DropoutKernel(DropoutParams p, bool vec) {
  using E = Elem<T>;
  constexpr int kB = kBlocksPerThread<T>;
  constexpr int kE = 4 * kB;
  const T* x = static_cast<const T*>(p.x);
  const T* bias = static_cast<const T*>(p.bias);
  const T* res = static_cast<const T*>(p.residual);
  T* y = static_cast<T*>(p.y);
  const int64_t units = (p.n + kE - 1) / kE;
  const int lane = static_cast<int>(threadIdx.x % 32);
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  // The loop runs per warp (u0 is the warp's first unit, a multiple of 32), so every lane takes
  // part in the bitmask's shuffles, and the 8 / kB lanes from a multiple of 8 / kB hold the eight
  // blocks of one mask word.
  for (int64_t u0 = static_cast<int64_t>(blockIdx.x) * blockDim.x + (threadIdx.x - lane); u0 < units; u0 += stride) {
    const int64_t u = u0 + lane;
    uint32_t bits = 0;
    if (u < units) {
      const int64_t i0 = kE * u;
      const int count = p.n - i0 < kE ? static_cast<int>(p.n - i0) : kE;
      const bool full = vec && count == kE;
      bool keep[kE];
#pragma unroll
      for (int j = 0; j < kE; ++j) keep[j] = true;
      if (p.random) {
#pragma unroll
        for (int b = 0; b < kB; ++b) {
          const Philox4x32 r = DropoutRandomBlock(p.seed, static_cast<uint64_t>(kB * u + b));
#pragma unroll
          for (int j = 0; j < 4; ++j) keep[4 * b + j] = PhiloxUniform(r.v[j]) < p.keep_probability;
        }
      }
      float v[kE];
#pragma unroll
      for (int j = 0; j < kE; ++j) v[j] = 0.0f;
      LoadUnit<T, kE>(x, i0, count, full, v);
      if (bias != nullptr) {
        int64_t b = i0 % p.nbias;  // one division per unit; then step with wrap-around
#pragma unroll
        for (int j = 0; j < kE; ++j) {
          if (j < count) {
            v[j] = __fadd_rn(v[j], E::Load(bias[b]));
            if (++b == p.nbias) b = 0;
          }
        }
      }
      if (p.random) {
#pragma unroll
        for (int j = 0; j < kE; ++j) v[j] = keep[j] ? __fmul_rn(v[j], p.scale) : 0.0f;
      }
      if (res != nullptr) {
        float r[kE];
#pragma unroll
        for (int j = 0; j < kE; ++j) r[j] = 0.0f;
        LoadUnit<T, kE>(res, i0, count, full, r);
#pragma unroll
        for (int j = 0; j < kE; ++j) v[j] = __fadd_rn(v[j], r[j]);
      }
      StoreUnit<T, kE>(y, i0, count, full, v);
      if constexpr (kMask == DropoutMask::kBool) {
        uint8_t* m = static_cast<uint8_t*>(p.mask);
        if (full) {
          VecN<uint8_t, kE> word;
#pragma unroll
          for (int j = 0; j < kE; ++j) word.v[j] = keep[j] ? 1 : 0;
          *reinterpret_cast<VecN<uint8_t, kE>*>(m + i0) = word;
        } else {
#pragma unroll
          for (int j = 0; j < kE; ++j) {
            if (j < count) m[i0 + j] = keep[j] ? 1 : 0;
          }
        }
      } else if constexpr (kMask == DropoutMask::kData) {
        float mv[kE];
#pragma unroll
        for (int j = 0; j < kE; ++j) mv[j] = keep[j] ? 1.0f : 0.0f;
        StoreUnit<T, kE>(static_cast<T*>(p.mask), i0, count, full, mv);
      }
      // Elements past n leave their bits 0 (the CPU's padding).
#pragma unroll
      for (int j = 0; j < kE; ++j) {
        if (j < count && keep[j]) bits |= 1u << j;
      }
    }
    if constexpr (kMask == DropoutMask::kBitmask) {
      // Block g holds bits 4 * (g % 8) .. +3 of word g / 8: OR the unit bits of the word's lanes.
      constexpr int kLanesPerWord = 8 / kB;
      bits <<= kE * (lane % kLanesPerWord);
#pragma unroll
      for (int m = 1; m < kLanesPerWord; m <<= 1) bits |= __shfl_xor_sync(0xffffffffu, bits, m);
      if (lane % kLanesPerWord == 0 && u < units) static_cast<uint32_t*>(p.mask)[kB * u / 8] = bits;
    }
  }
}

template <typename T, bool kBitmask>
__global__ void __launch_bounds__(kThreads)
    DropoutGradKernel(const T* dy, const void* mask, float scale, T* dx, int64_t n, bool vec) {
  constexpr int kB = kBlocksPerThread<T>;
  constexpr int kE = 4 * kB;
  const int64_t units = (n + kE - 1) / kE;
  MEMOPT_GRID_STRIDE(u, units) {
    const int64_t i0 = kE * u;
    const int count = n - i0 < kE ? static_cast<int>(n - i0) : kE;
    const bool full = vec && count == kE;
    uint32_t bits = 0;
    if constexpr (kBitmask) {
      const int64_t g = kB * u;  // a multiple of kB: the unit's kE bits lie in one word
      bits = (static_cast<const uint32_t*>(mask)[g / 8] >> (4 * (g % 8))) & ((1u << kE) - 1u);
    } else {
      const uint8_t* m = static_cast<const uint8_t*>(mask);
      if (full) {
        const VecN<uint8_t, kE> word = *reinterpret_cast<const VecN<uint8_t, kE>*>(m + i0);
#pragma unroll
        for (int j = 0; j < kE; ++j) bits |= word.v[j] != 0 ? 1u << j : 0u;
      } else {
#pragma unroll
        for (int j = 0; j < kE; ++j) {
          if (j < count && m[i0 + j] != 0) bits |= 1u << j;
        }
      }
    }
    float v[kE];
#pragma unroll
    for (int j = 0; j < kE; ++j) v[j] = 0.0f;
    LoadUnit<T, kE>(dy, i0, count, full, v);
#pragma unroll
    for (int j = 0; j < kE; ++j) v[j] = (bits >> j) & 1u ? __fmul_rn(v[j], scale) : 0.0f;
    StoreUnit<T, kE>(dx, i0, count, full, v);
  }
}

template <typename T>
cudaError_t LaunchTyped(DropoutMask mask, const DropoutParams& p, cudaStream_t s) {
  if (p.n == 0) return cudaSuccess;
  constexpr int kE = 4 * kBlocksPerThread<T>;
  bool vec = AlignedTo(kVecAlign<T, kE>, {p.x, p.y, p.residual});
  if (mask == DropoutMask::kBool) vec = vec && AlignedTo(kE, {p.mask});
  if (mask == DropoutMask::kData) vec = vec && AlignedTo(kVecAlign<T, kE>, {p.mask});
  const unsigned blocks = BlocksFor((p.n + kE - 1) / kE);
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
  constexpr int kE = 4 * kBlocksPerThread<T>;
  const bool vec = AlignedTo(kVecAlign<T, kE>, {dy, dx}) && (bitmask || AlignedTo(kE, {mask}));
  const unsigned blocks = BlocksFor((n + kE - 1) / kE);
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
