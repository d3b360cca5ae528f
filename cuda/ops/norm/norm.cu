// Device code of the layer normalisations (ops/norm/norm.cc), statistics in float as on the CPU.
// Rows whose length is a multiple of 16 bytes (up to 2,048 16-bit or 1,024 float elements) take
// the register path: a warp per row, held in registers and moved 16 bytes at a time. Other rows
// take one group of threads per row (a warp for rows up to 1024 elements, the block for longer
// ones), kept in shared memory between the passes when it fits; either way x is read once.
#include "norm_launch.h"
#include "ops/reduce/reduce_common.cuh"

namespace memopt::cuda {
namespace {

// Row cache budget: 40 KiB, under the 48 KiB a block may use without an opt-in (static shared
// memory included), and small enough for several blocks per SM.
constexpr int64_t kMaxCachedFloats = 10240;

struct RowStats {
  float mean;
  float inv_std;
};

/// The statistics of one row, computed by a group of G threads (`lane`: this thread's index in
/// it), as the CPU does: the mean first, then the mean of the squared deviations from it (two
/// passes rather than E[x^2] - E[x]^2, which cancels badly). value(i) yields element i in float;
/// `cache` (nullptr: none) keeps this lane's values for the later passes. Every lane gets the
/// result; for G > 32 the whole block must call (GroupReduce).
template <int G, typename Value>
__device__ RowStats ComputeRowStats(const Value& value, float* cache, int64_t cols, int lane, bool simplified,
                                    float eps, float* red) {
  float mean = 0.0f;
  bool filled = false;
  if (!simplified) {
    float sum = 0.0f;
    for (int64_t i = lane; i < cols; i += G) {
      const float v = value(i);
      if (cache != nullptr) cache[i] = v;
      sum += v;
    }
    sum = GroupReduce<G>(SumOp{}, sum, red);
    mean = cols > 0 ? sum / static_cast<float>(cols) : 0.0f;
    filled = cache != nullptr;
  }
  float sq = 0.0f;
  for (int64_t i = lane; i < cols; i += G) {
    float v;
    if (filled) {
      v = cache[i];
    } else {
      v = value(i);
      if (cache != nullptr) cache[i] = v;
    }
    const float c = v - mean;
    sq += c * c;
  }
  sq = GroupReduce<G>(SumOp{}, sq, red);
  const float var = cols > 0 ? sq / static_cast<float>(cols) : 0.0f;
  return RowStats{mean, 1.0f / sqrtf(var + eps)};
}

__device__ inline void StoreStat(void* p, bool as_double, int64_t r, float v) {
  if (p == nullptr) return;
  if (as_double) {
    static_cast<double*>(p)[r] = v;
  } else {
    static_cast<float*>(p)[r] = v;
  }
}

/// kThreads / G rows per block; `cached`: dynamic shared memory holds one row per group.
template <int G, typename T, typename P>
__global__ void __launch_bounds__(kThreads) LayerNormKernel(LayerNormArgs a, bool cached) {
  extern __shared__ float row_cache[];
  __shared__ float red[kThreads / 32];
  constexpr int kRowsPerBlock = kThreads / G;
  const int lane = threadIdx.x % G;
  float* cache = cached ? row_cache + static_cast<int64_t>(threadIdx.x / G) * a.cols : nullptr;
  const T* x = static_cast<const T*>(a.x);
  const T* skip = static_cast<const T*>(a.skip);
  const T* pre_bias = static_cast<const T*>(a.pre_bias);
  const P* scale = static_cast<const P*>(a.scale);
  const P* bias = static_cast<const P*>(a.bias);
  P* y = static_cast<P*>(a.y);
  T* sum_out = static_cast<T*>(a.sum_out);
  // For G == kThreads every thread of the block sees the same rows (GroupReduce synchronises).
  for (int64_t base = static_cast<int64_t>(blockIdx.x) * kRowsPerBlock; base < a.rows;
       base += static_cast<int64_t>(gridDim.x) * kRowsPerBlock) {
    const int64_t r = base + threadIdx.x / G;
    if (r >= a.rows) continue;  // G == 32 only: the whole warp skips
    const int64_t off = r * a.cols;
    const T* skip_row = skip != nullptr ? skip + (r % a.skip_rows) * a.cols : nullptr;
    // The CPU's order: x + skip, then + bias.
    const auto value = [&](int64_t i) {
      float v = Elem<T>::Load(x[off + i]);
      if (skip_row != nullptr) v += Elem<T>::Load(skip_row[i]);
      if (pre_bias != nullptr) v += Elem<T>::Load(pre_bias[i]);
      return v;
    };
    const RowStats st = ComputeRowStats<G>(value, cache, a.cols, lane, a.simplified, a.epsilon, red);
    for (int64_t i = lane; i < a.cols; i += G) {
      const float v = cache != nullptr ? cache[i] : value(i);
      float out = (v - st.mean) * st.inv_std * Elem<P>::Load(scale[i]);
      if (bias != nullptr) out += Elem<P>::Load(bias[i]);
      y[off + i] = Elem<P>::Store(out);
      if (sum_out != nullptr) sum_out[off + i] = Elem<T>::Store(v);
    }
    if (lane == 0) {
      StoreStat(a.mean, a.stats_double, r, st.mean);
      StoreStat(a.inv_std, a.stats_double, r, st.inv_std);
    }
  }
}

/// Vectors of N = 16 / sizeof(T) elements a lane holds at most in the register path.
constexpr int kMaxRowVecs = 8;

/// v[k][e] += row[(lane + 32 k) * N + e] for the lane's vectors of a row of nvec vectors.
template <typename T, int N, int kVecs>
__device__ inline void AddLaneVectors(const T* row, int lane, int64_t nvec, float (&v)[kVecs][N]) {
#pragma unroll
  for (int k = 0; k < kVecs; ++k) {
    const int64_t j = lane + 32 * k;
    if (j < nvec) {
      float add[N];
      LoadFloats<T, N>(row + j * N, add);
#pragma unroll
      for (int e = 0; e < N; ++e) v[k][e] += add[e];
    }
  }
}

/// The register path: a warp per row of cols % N == 0 and at most 32 * kVecs * N elements. Each
/// lane holds vectors lane, lane + 32, ... of its row in registers, so x (and skip) are read once,
/// 16 bytes at a time, and y is written the same way. The same arithmetic as LayerNormKernel.
template <typename T, typename P, int kVecs>
__global__ void __launch_bounds__(kThreads) LayerNormRegsKernel(LayerNormArgs a) {
  constexpr int N = 16 / static_cast<int>(sizeof(T));
  constexpr int kRowsPerBlock = kThreads / 32;
  const int lane = static_cast<int>(threadIdx.x % 32);
  const int64_t nvec = a.cols / N;
  const T* x = static_cast<const T*>(a.x);
  const T* skip = static_cast<const T*>(a.skip);
  const T* pre_bias = static_cast<const T*>(a.pre_bias);
  const P* scale = static_cast<const P*>(a.scale);
  const P* bias = static_cast<const P*>(a.bias);
  P* y = static_cast<P*>(a.y);
  T* sum_out = static_cast<T*>(a.sum_out);
  for (int64_t r = static_cast<int64_t>(blockIdx.x) * kRowsPerBlock + threadIdx.x / 32; r < a.rows;
       r += static_cast<int64_t>(gridDim.x) * kRowsPerBlock) {
    const int64_t off = r * a.cols;
    float v[kVecs][N];
    // Every load first, then the arithmetic: kVecs independent 16-byte loads in flight per lane.
#pragma unroll
    for (int k = 0; k < kVecs; ++k) {
      const int64_t j = lane + 32 * k;
      if (j < nvec) LoadFloats<T, N>(x + off + j * N, v[k]);
    }
    // The CPU's order: x + skip, then + bias.
    if (skip != nullptr) AddLaneVectors<T, N, kVecs>(skip + (r % a.skip_rows) * a.cols, lane, nvec, v);
    if (pre_bias != nullptr) AddLaneVectors<T, N, kVecs>(pre_bias, lane, nvec, v);
    float mean = 0.0f;
    if (!a.simplified) {
      float sum = 0.0f;
#pragma unroll
      for (int k = 0; k < kVecs; ++k) {
        if (lane + 32 * k < nvec) {
#pragma unroll
          for (int e = 0; e < N; ++e) sum += v[k][e];
        }
      }
      for (int m = 16; m > 0; m >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, m);
      mean = sum / static_cast<float>(a.cols);
    }
    float sq = 0.0f;
#pragma unroll
    for (int k = 0; k < kVecs; ++k) {
      if (lane + 32 * k < nvec) {
#pragma unroll
        for (int e = 0; e < N; ++e) {
          const float c = v[k][e] - mean;
          sq += c * c;
        }
      }
    }
    for (int m = 16; m > 0; m >>= 1) sq += __shfl_xor_sync(0xffffffffu, sq, m);
    const float inv_std = 1.0f / sqrtf(sq / static_cast<float>(a.cols) + a.epsilon);
#pragma unroll
    for (int k = 0; k < kVecs; ++k) {
      const int64_t j = lane + 32 * k;
      if (j >= nvec) continue;
      float sc[N], out[N];
      LoadFloats<P, N>(scale + j * N, sc);
#pragma unroll
      for (int e = 0; e < N; ++e) out[e] = (v[k][e] - mean) * inv_std * sc[e];
      if (bias != nullptr) {
        float b[N];
        LoadFloats<P, N>(bias + j * N, b);
#pragma unroll
        for (int e = 0; e < N; ++e) out[e] += b[e];
      }
      StoreFloats<P, N>(y + off + j * N, out);
      if (sum_out != nullptr) StoreFloats<T, N>(sum_out + off + j * N, v[k]);
    }
    if (lane == 0) {
      StoreStat(a.mean, a.stats_double, r, mean);
      StoreStat(a.inv_std, a.stats_double, r, inv_std);
    }
  }
}

/// Launches the register path when the row and every pointer allow it; false otherwise.
template <typename T, typename P>
bool RunRegs(const LayerNormArgs& a, cudaStream_t stream, cudaError_t* err) {
  constexpr int N = 16 / static_cast<int>(sizeof(T));
  if (a.cols == 0 || a.cols % N != 0 || a.cols > 32 * kMaxRowVecs * N) return false;
  if (!AlignedTo(16, {a.x, a.skip, a.pre_bias, a.sum_out}) ||
      !AlignedTo(kVecAlign<P, N>, {a.scale, a.bias, a.y})) {
    return false;
  }
  const int64_t per_lane = (a.cols / N + 31) / 32;
  constexpr int64_t kRowsPerBlock = kThreads / 32;
  const int64_t blocks = (a.rows + kRowsPerBlock - 1) / kRowsPerBlock;
  const dim3 grid(static_cast<unsigned>(blocks < 65536 ? blocks : 65536));
  if (per_lane <= 1) {
    LayerNormRegsKernel<T, P, 1><<<grid, kThreads, 0, stream>>>(a);
  } else if (per_lane <= 2) {
    LayerNormRegsKernel<T, P, 2><<<grid, kThreads, 0, stream>>>(a);
  } else if (per_lane <= 4) {
    LayerNormRegsKernel<T, P, 4><<<grid, kThreads, 0, stream>>>(a);
  } else {
    LayerNormRegsKernel<T, P, kMaxRowVecs><<<grid, kThreads, 0, stream>>>(a);
  }
  *err = cudaGetLastError();
  return true;
}

template <int G, typename T, typename P>
cudaError_t Run(const LayerNormArgs& a, cudaStream_t stream) {
  constexpr int64_t kRowsPerBlock = kThreads / G;
  const bool cached = kRowsPerBlock * a.cols <= kMaxCachedFloats;
  const size_t smem = cached ? static_cast<size_t>(kRowsPerBlock * a.cols) * sizeof(float) : 0;
  const int64_t blocks = (a.rows + kRowsPerBlock - 1) / kRowsPerBlock;
  LayerNormKernel<G, T, P><<<static_cast<unsigned>(blocks < 65536 ? blocks : 65536), kThreads, smem, stream>>>(
      a, cached);
  return cudaGetLastError();
}

}  // namespace

cudaError_t LaunchLayerNorm(ElemType x_type, ElemType param_type, const LayerNormArgs& a, cudaStream_t stream) {
  if (a.rows == 0) return cudaSuccess;  // rows of 0 elements still get their statistics
  return DispatchTypePair(x_type, param_type, [&](auto t, auto p) {
    using T = decltype(t);
    using P = decltype(p);
    cudaError_t err = cudaSuccess;
    if (RunRegs<T, P>(a, stream, &err)) return err;
    return a.cols <= 1024 ? Run<32, T, P>(a, stream) : Run<kThreads, T, P>(a, stream);
  });
}

}  // namespace memopt::cuda
