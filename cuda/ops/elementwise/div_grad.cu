// Device code of ops/elementwise/div_grad.cc. A thread owns one element of the output (dA or dB):
// it decodes its coordinates along the dims where that input is not broadcast, then walks the dims
// where it is (in row-major order, so in dY's index order) and adds the terms in double.
#include "common.cuh"
#include "div_grad_launch.h"

namespace memopt::cuda {
namespace {

template <typename T, bool kForA>
__global__ void DivGradKernel(const T* dy, const T* a, const T* b, T* out, int64_t out_n, BroadcastShape bc) {
  using E = Elem<T>;
  const int64_t* own = kForA ? bc.a_strides : bc.b_strides;
  int64_t dy_strides[kMaxRank];
  int64_t reduced = 1;
  for (int d = bc.rank - 1, s = 1; d >= 0; --d) {
    dy_strides[d] = s;
    s *= bc.out_dims[d];
    if (own[d] == 0) reduced *= bc.out_dims[d];
  }
  MEMOPT_GRID_STRIDE(j, out_n) {
    // The output is contiguous over its own dims, whose strides decrease: decode j with them.
    int64_t rest = j, base_dy = 0, base_a = 0, base_b = 0;
    for (int d = 0; d < bc.rank; ++d) {
      if (own[d] == 0) continue;
      const int64_t coord = rest / own[d];
      rest %= own[d];
      base_dy += coord * dy_strides[d];
      base_a += coord * bc.a_strides[d];
      base_b += coord * bc.b_strides[d];
    }
    double sum = 0;
    for (int64_t r = 0; r < reduced; ++r) {
      int64_t t = r, idy = base_dy, ia = base_a, ib = base_b;
      for (int d = bc.rank - 1; d >= 0; --d) {
        if (own[d] != 0) continue;
        const int64_t coord = t % bc.out_dims[d];
        t /= bc.out_dims[d];
        idy += coord * dy_strides[d];
        ia += coord * bc.a_strides[d];
        ib += coord * bc.b_strides[d];
      }
      const double g = E::Load(dy[idy]), bv = E::Load(b[ib]);
      if constexpr (kForA) {
        sum += g / bv;
      } else {
        sum -= g * static_cast<double>(E::Load(a[ia])) / (bv * bv);
      }
    }
    out[j] = E::Store(static_cast<float>(sum));
  }
}

template <typename T>
cudaError_t Launch(bool for_a, const void* dy, const void* a, const void* b, void* out, int64_t out_n,
                   const BroadcastShape& bc, cudaStream_t s) {
  if (out_n == 0) return cudaSuccess;
  const T* pdy = static_cast<const T*>(dy);
  const T* pa = static_cast<const T*>(a);
  const T* pb = static_cast<const T*>(b);
  T* po = static_cast<T*>(out);
  if (for_a) {
    DivGradKernel<T, true><<<BlocksFor(out_n), kThreads, 0, s>>>(pdy, pa, pb, po, out_n, bc);
  } else {
    DivGradKernel<T, false><<<BlocksFor(out_n), kThreads, 0, s>>>(pdy, pa, pb, po, out_n, bc);
  }
  return cudaGetLastError();
}

}  // namespace

cudaError_t LaunchDivGrad(ElemType t, bool for_a, const void* dy, const void* a, const void* b, void* out,
                          int64_t out_n, const BroadcastShape& bc, cudaStream_t stream) {
  switch (t) {
    case ElemType::kF32: return Launch<float>(for_a, dy, a, b, out, out_n, bc, stream);
    case ElemType::kF16: return Launch<F16>(for_a, dy, a, b, out, out_n, bc, stream);
    case ElemType::kBF16: return Launch<BF16>(for_a, dy, a, b, out, out_n, bc, stream);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace memopt::cuda
