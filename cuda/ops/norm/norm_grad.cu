// Device code of the layer normalisation gradients (ops/norm/norm.cc): dX by one group of threads
// per row (a warp for rows up to 1024 elements, else the block), dScale/dBias as column sums over
// all rows by the chunked column reduction (reduce_common.cuh): deterministic, coalesced.
// Sums accumulate in float (the CPU uses double; see the tests' tolerance).
#include "norm_launch.h"
#include "ops/reduce/reduce_common.cuh"

namespace memopt::cuda {
namespace {

template <typename T, typename P>
struct GradView {
  LayerNormGradKind kind;
  const T* dy;
  const T* x;
  const P* scale;
  const P* bias;
  const void* mean;
  const void* inv_std;
  bool stats_double;
  int64_t cols;

  __device__ float Stat(const void* p, int64_t r) const {
    return stats_double ? static_cast<float>(static_cast<const double*>(p)[r]) : static_cast<const float*>(p)[r];
  }
  __device__ float MeanOf(int64_t r) const { return kind == LayerNormGradKind::kFull ? Stat(mean, r) : 0.0f; }
  __device__ float InvOf(int64_t r) const { return Stat(inv_std, r); }
  /// The normalised input at column c of a row with the given statistics (kInvertible recovers
  /// it from the forward's output).
  __device__ float Xhat(float xv, int64_t c, float mean_r, float inv_r) const {
    switch (kind) {
      case LayerNormGradKind::kFull: return (xv - mean_r) * inv_r;
      case LayerNormGradKind::kSimplified: return xv * inv_r;
      default: return (xv - Elem<P>::Load(bias[c])) / Elem<P>::Load(scale[c]);
    }
  }
  /// dy * scale * inv_std, in the CPU's order.
  __device__ float B(int64_t off, int64_t c, float inv_r) const {
    return Elem<T>::Load(dy[off + c]) * Elem<P>::Load(scale[c]) * inv_r;
  }
};

template <int G, typename T, typename P>
__global__ void __launch_bounds__(kThreads) GradRowsKernel(GradView<T, P> v, T* dx, int64_t rows) {
  __shared__ float2 red[kThreads / 32];
  constexpr int kRowsPerBlock = kThreads / G;
  const int lane = threadIdx.x % G;
  // For G == kThreads every thread of the block sees the same rows (GroupReduce synchronises).
  for (int64_t base = static_cast<int64_t>(blockIdx.x) * kRowsPerBlock; base < rows;
       base += static_cast<int64_t>(gridDim.x) * kRowsPerBlock) {
    const int64_t r = base + threadIdx.x / G;
    if (r >= rows) continue;  // G == 32 only: the whole warp skips
    const int64_t off = r * v.cols;
    const float mean_r = v.MeanOf(r);
    const float inv_r = v.InvOf(r);
    float2 acc = make_float2(0.0f, 0.0f);
    for (int64_t i = lane; i < v.cols; i += G) {
      const float b = v.B(off, i, inv_r);
      acc.x += b;
      acc.y += b * v.Xhat(Elem<T>::Load(v.x[off + i]), i, mean_r, inv_r);
    }
    acc = GroupReduce<G>(Sum2Op{}, acc, red);
    const float n = static_cast<float>(v.cols);
    const float mean_b = v.kind == LayerNormGradKind::kSimplified ? 0.0f : acc.x / n;
    const float mean_bx = acc.y / n;
    for (int64_t i = lane; i < v.cols; i += G) {
      const float xh = v.Xhat(Elem<T>::Load(v.x[off + i]), i, mean_r, inv_r);
      dx[off + i] = Elem<T>::Store(v.B(off, i, inv_r) - mean_b - xh * mean_bx);
    }
  }
}

/// (dy * xhat, dy) at row r, column c: the terms of dScale and dBias.
template <typename T, typename P>
struct GradColumnSrc {
  static constexpr int kMaxVec = 1;  // one column per thread
  GradView<T, P> v;
  __device__ float2 Load(int64_t, int64_t r, int64_t c) const {
    const int64_t off = r * v.cols + c;
    const float g = Elem<T>::Load(v.dy[off]);
    return make_float2(g * v.Xhat(Elem<T>::Load(v.x[off]), c, v.MeanOf(r), v.InvOf(r)), g);
  }
};

template <typename P>
struct GradColumnOut {
  P* dscale;
  P* dbias;
  __device__ void Store(int64_t j, float2 acc) const {
    if (dscale != nullptr) dscale[j] = Elem<P>::Store(acc.x);
    if (dbias != nullptr) dbias[j] = Elem<P>::Store(acc.y);
  }
};

template <typename T, typename P>
cudaError_t Run(const LayerNormGradArgs& a, float* scratch, cudaStream_t stream) {
  const GradView<T, P> v{a.kind,          static_cast<const T*>(a.dy), static_cast<const T*>(a.x),
                         static_cast<const P*>(a.scale), static_cast<const P*>(a.bias), a.mean,
                         a.inv_std,       a.stats_double,               a.cols};
  if (a.rows > 0 && a.cols > 0) {
    T* dx = static_cast<T*>(a.dx);
    if (a.cols <= 1024) {
      constexpr int64_t kRowsPerBlock = kThreads / 32;
      const int64_t blocks = (a.rows + kRowsPerBlock - 1) / kRowsPerBlock;
      GradRowsKernel<32, T, P><<<static_cast<unsigned>(blocks < 65536 ? blocks : 65536), kThreads, 0, stream>>>(
          v, dx, a.rows);
    } else {
      GradRowsKernel<kThreads, T, P>
          <<<static_cast<unsigned>(a.rows < 65536 ? a.rows : 65536), kThreads, 0, stream>>>(v, dx, a.rows);
    }
    if (const cudaError_t err = cudaGetLastError(); err != cudaSuccess) return err;
  }
  if (a.dscale == nullptr && a.dbias == nullptr) return cudaSuccess;
  // Zero rows: the column sums are 0, written by the same kernel.
  return LaunchColumnReduce(Sum2Op{}, GradColumnSrc<T, P>{v},
                            GradColumnOut<P>{static_cast<P*>(a.dscale), static_cast<P*>(a.dbias)},
                            PlanColumnReduce(1, a.rows, a.cols), reinterpret_cast<float2*>(scratch), stream);
}

}  // namespace

cudaError_t LaunchLayerNormGrad(ElemType x_type, ElemType param_type, const LayerNormGradArgs& a, float* scratch,
                                cudaStream_t stream) {
  return DispatchTypePair(x_type, param_type, [&](auto t, auto p) {
    return Run<decltype(t), decltype(p)>(a, scratch, stream);
  });
}

}  // namespace memopt::cuda
