// Device code of data_movement.cc and ops/index/gather.cc: the strided copy behind Transpose, Concat, Split,
// Expand, Slice and SliceGrad, Where's selection, Gather and GatherGrad's scatter-add. The copies
// move raw words chosen by element size, so every type of that size shares one instantiation.
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>
#include <utility>

#include "common.cuh"
#include "data_movement_launch.h"

namespace memopt::cuda {
namespace {

bool g_wide_index = false;  // SetWideIndexForTesting

// 32-bit index arithmetic (FastDivmod) for tensors below 2^31 elements.
bool UseFast(int64_t n) { return n <= kMaxFastIndex && !g_wide_index; }

template <int kBytes>
struct Word;
template <>
struct Word<1> { using type = uint8_t; };
template <>
struct Word<2> { using type = uint16_t; };
template <>
struct Word<4> { using type = uint32_t; };
template <>
struct Word<8> { using type = unsigned long long; };
template <>
struct Word<16> { using type = uint4; };

// fn(Word<N>{}) for the element size N; cudaErrorInvalidValue for other sizes.
template <typename Fn>
cudaError_t BySize(int bytes, Fn&& fn) {
  switch (bytes) {
    case 1: return fn(Word<1>{});
    case 2: return fn(Word<2>{});
    case 4: return fn(Word<4>{});
    case 8: return fn(Word<8>{});
    case 16: return fn(Word<16>{});
    default: return cudaErrorInvalidValue;
  }
}

// Peels the coordinate of one dim off a linear index: returns it and leaves the index over the
// outer dims in `rest`. The 32-bit form multiplies by a precomputed reciprocal.
template <bool kFast>
__device__ __forceinline__ int64_t PeelDim(int64_t& rest, const FastDivmod& fd, int64_t dim) {
  if constexpr (kFast) {
    const auto r = static_cast<uint32_t>(rest);
    const uint32_t q = fd.Div(r);
    rest = q;
    return static_cast<int64_t>(r - q * fd.divisor);
  } else {
    const int64_t q = rest / dim;
    const int64_t c = rest - q * dim;
    rest = q;
    return c;
  }
}

struct CopyParams {
  int rank = 0;
  int64_t dims[kMaxRank] = {};
  FastDivmod div[kMaxRank];
  int64_t src[kMaxRank] = {};
  int64_t dst[kMaxRank] = {};
};

template <typename W, bool kFast>
__global__ void StridedCopyKernel(const W* __restrict__ src, W* __restrict__ dst, int64_t n, CopyParams p) {
  MEMOPT_GRID_STRIDE(i, n) {
    int64_t rest = i, s = 0, d = 0;
    for (int k = p.rank - 1; k > 0; --k) {
      const int64_t c = PeelDim<kFast>(rest, p.div[k], p.dims[k]);
      s += c * p.src[k];
      d += c * p.dst[k];
    }
    dst[d + rest * p.dst[0]] = src[s + rest * p.src[0]];
  }
}

// Dims 0..batch_rank-1 are batch dims walked per block; the tile covers dim a (contiguous in
// the source) and dim b (contiguous in the destination), so both the read and the write of a
// tile are coalesced, the transpose happening through shared memory.
constexpr int kTile = 32;
constexpr int kTileRows = 8;

struct TileParams {
  int batch_rank = 0;
  int64_t batches = 1;
  int64_t batch_dims[kMaxRank] = {};
  int64_t batch_src[kMaxRank] = {};
  int64_t batch_dst[kMaxRank] = {};
  int64_t a = 0, b = 0;
  int64_t src_a = 1, src_b = 0, dst_a = 0, dst_b = 1;
};

template <typename W>
__global__ void TiledTransposeKernel(const W* __restrict__ src, W* __restrict__ dst, TileParams p) {
  __shared__ W tile[kTile][kTile + 1];  // +1: the column reads hit distinct banks
  const int64_t a0 = static_cast<int64_t>(blockIdx.y) * kTile;
  const int64_t b0 = static_cast<int64_t>(blockIdx.x) * kTile;
  for (int64_t z = blockIdx.z; z < p.batches; z += gridDim.z) {
    int64_t rest = z, so = 0, dof = 0;
    for (int k = p.batch_rank - 1; k >= 0; --k) {
      const int64_t c = rest % p.batch_dims[k];
      rest /= p.batch_dims[k];
      so += c * p.batch_src[k];
      dof += c * p.batch_dst[k];
    }
    const int64_t a = a0 + threadIdx.x;
    for (int j = threadIdx.y; j < kTile; j += kTileRows) {
      const int64_t b = b0 + j;
      if (a < p.a && b < p.b) tile[j][threadIdx.x] = src[so + a * p.src_a + b * p.src_b];
    }
    __syncthreads();
    const int64_t b = b0 + threadIdx.x;
    for (int j = threadIdx.y; j < kTile; j += kTileRows) {
      const int64_t aa = a0 + j;
      if (aa < p.a && b < p.b) dst[dof + aa * p.dst_a + b * p.dst_b] = tile[threadIdx.x][j];
    }
    __syncthreads();  // the next batch refills the tile
  }
}

bool Aligned(const void* p, int bytes) { return reinterpret_cast<uintptr_t>(p) % static_cast<uintptr_t>(bytes) == 0; }

// Regroups the contiguous inner run (stride 1 on both sides) into words of `w` bytes when the run
// length, every outer stride and both base pointers allow it.
bool Widen(StridedCopyShape& s, int& elem_size, int w, const void* src, const void* dst) {
  const int r = s.rank;
  if ((s.dims[r - 1] * elem_size) % w != 0 || !Aligned(src, w) || !Aligned(dst, w)) return false;
  for (int k = 0; k < r - 1; ++k) {
    if ((s.src_strides[k] * elem_size) % w != 0 || (s.dst_strides[k] * elem_size) % w != 0) return false;
  }
  s.dims[r - 1] = s.dims[r - 1] * elem_size / w;
  for (int k = 0; k < r - 1; ++k) {
    s.src_strides[k] = s.src_strides[k] * elem_size / w;
    s.dst_strides[k] = s.dst_strides[k] * elem_size / w;
  }
  elem_size = w;
  return true;
}

cudaError_t LaunchTiled(int elem_size, const void* src, void* dst, const StridedCopyShape& s, cudaStream_t stream) {
  const int r = s.rank;
  TileParams p;
  p.batch_rank = r - 2;
  for (int k = 0; k < r - 2; ++k) {
    p.batch_dims[k] = s.dims[k];
    p.batch_src[k] = s.src_strides[k];
    p.batch_dst[k] = s.dst_strides[k];
    p.batches *= s.dims[k];
  }
  p.a = s.dims[r - 2];
  p.b = s.dims[r - 1];
  p.src_a = s.src_strides[r - 2];
  p.dst_a = s.dst_strides[r - 2];
  p.src_b = s.src_strides[r - 1];
  p.dst_b = s.dst_strides[r - 1];
  const dim3 block(kTile, kTileRows);
  const dim3 grid(static_cast<unsigned>((p.b + kTile - 1) / kTile), static_cast<unsigned>((p.a + kTile - 1) / kTile),
                  static_cast<unsigned>(p.batches < 65535 ? p.batches : 65535));
  return BySize(elem_size, [&](auto tag) {
    using W = typename decltype(tag)::type;
    TiledTransposeKernel<W><<<grid, block, 0, stream>>>(static_cast<const W*>(src), static_cast<W*>(dst), p);
    return cudaGetLastError();
  });
}

}  // namespace

void SetWideIndexForTesting(bool on) { g_wide_index = on; }

cudaError_t LaunchStridedCopy(int elem_size, const void* src, int64_t src_off, void* dst, int64_t dst_off,
                              StridedCopyShape s, cudaStream_t stream) {
  int64_t n = 1;
  for (int k = 0; k < s.rank; ++k) n *= s.dims[k];
  if (n == 0) return cudaSuccess;
  const char* sp = static_cast<const char*>(src) + src_off * elem_size;
  char* dp = static_cast<char*>(dst) + dst_off * elem_size;
  const int r = s.rank;
  if (r == 0 || (r == 1 && s.src_strides[0] == 1 && s.dst_strides[0] == 1)) {
    return cudaMemcpyAsync(dp, sp, static_cast<size_t>(n * elem_size), cudaMemcpyDeviceToDevice, stream);
  }
  if (r >= 2 && s.dst_strides[r - 1] == 1 && s.src_strides[r - 1] != 1) {
    // The iteration order of the dims is free (each coordinate is copied once), so move the dim
    // the source walks contiguously next to the destination's fastest dim and tile the pair.
    int k = -1;
    for (int d = r - 2; d >= 0 && k < 0; --d) {
      if (s.src_strides[d] == 1) k = d;
    }
    if (k >= 0 && s.dims[k] >= 16 && s.dims[r - 1] >= 16 && (s.dims[k] + kTile - 1) / kTile <= 65535 &&
        (s.dims[r - 1] + kTile - 1) / kTile <= 0x7fffffff) {
      StridedCopyShape t = s;
      std::swap(t.dims[k], t.dims[r - 2]);
      std::swap(t.src_strides[k], t.src_strides[r - 2]);
      std::swap(t.dst_strides[k], t.dst_strides[r - 2]);
      return LaunchTiled(elem_size, sp, dp, t, stream);
    }
  }
  if (s.src_strides[r - 1] == 1 && s.dst_strides[r - 1] == 1) {
    for (int w = 16; w > elem_size; w /= 2) {
      if (Widen(s, elem_size, w, sp, dp)) break;
    }
    n = 1;
    for (int k = 0; k < r; ++k) n *= s.dims[k];
  }
  CopyParams p;
  p.rank = r;
  const bool fast = UseFast(n);
  for (int k = 0; k < r; ++k) {
    p.dims[k] = s.dims[k];
    p.src[k] = s.src_strides[k];
    p.dst[k] = s.dst_strides[k];
    if (fast) p.div[k] = FastDivmod(static_cast<uint32_t>(s.dims[k]));
  }
  return BySize(elem_size, [&](auto tag) {
    using W = typename decltype(tag)::type;
    const auto* ps = reinterpret_cast<const W*>(sp);
    auto* pd = reinterpret_cast<W*>(dp);
    if (fast) {
      StridedCopyKernel<W, true><<<BlocksFor(n), kThreads, 0, stream>>>(ps, pd, n, p);
    } else {
      StridedCopyKernel<W, false><<<BlocksFor(n), kThreads, 0, stream>>>(ps, pd, n, p);
    }
    return cudaGetLastError();
  });
}

namespace {

struct WhereParams {
  int rank = 0;
  int64_t dims[kMaxRank] = {};
  FastDivmod div[kMaxRank];
  int64_t c[kMaxRank] = {};
  int64_t x[kMaxRank] = {};
  int64_t y[kMaxRank] = {};
};

template <typename W, bool kFast>
__global__ void WhereKernel(const uint8_t* __restrict__ cond, const W* __restrict__ x, const W* __restrict__ y,
                            W* __restrict__ out, int64_t n, WhereParams p) {
  MEMOPT_GRID_STRIDE(i, n) {
    int64_t rest = i, oc = 0, ox = 0, oy = 0;
    for (int k = p.rank - 1; k > 0; --k) {
      const int64_t c = PeelDim<kFast>(rest, p.div[k], p.dims[k]);
      oc += c * p.c[k];
      ox += c * p.x[k];
      oy += c * p.y[k];
    }
    if (p.rank > 0) {
      oc += rest * p.c[0];
      ox += rest * p.x[0];
      oy += rest * p.y[0];
    }
    out[i] = cond[oc] != 0 ? x[ox] : y[oy];
  }
}

// One output word of Gather: i = (o * nidx + j) * inner + k over words of the inner run.
template <typename W, typename I, bool kFast>
__global__ void GatherKernel(const W* __restrict__ data, const I* __restrict__ idx, W* __restrict__ out, int64_t n,
                             int64_t dim, int64_t nidx, int64_t inner, FastDivmod div_inner, FastDivmod div_nidx) {
  MEMOPT_GRID_STRIDE(i, n) {
    int64_t rest = i;
    const int64_t k = PeelDim<kFast>(rest, div_inner, inner);
    const int64_t j = PeelDim<kFast>(rest, div_nidx, nidx);
    int64_t g = static_cast<int64_t>(idx[j]);
    if (g < 0) g += dim;
    out[i] = g >= 0 && g < dim ? data[(rest * dim + g) * inner + k] : W{};
  }
}

template <typename T, typename I, bool kFast>
__global__ void GatherGradKernel(const T* __restrict__ dy, const I* __restrict__ idx, float* __restrict__ acc,
                                 int64_t n, int64_t dim, int64_t q, int64_t post, FastDivmod div_post,
                                 FastDivmod div_q) {
  MEMOPT_GRID_STRIDE(i, n) {
    int64_t rest = i;
    const int64_t k = PeelDim<kFast>(rest, div_post, post);
    const int64_t j = PeelDim<kFast>(rest, div_q, q);
    int64_t g = static_cast<int64_t>(idx[j]);
    if (g < 0) g += dim;
    if (g >= 0 && g < dim) atomicAdd(acc + (rest * dim + g) * post + k, static_cast<float>(Elem<T>::Load(dy[i])));
  }
}

template <typename I>
cudaError_t GatherGradTyped(ElemType t, const void* dy, const I* idx, float* acc, int64_t n, int64_t dim, int64_t q,
                            int64_t post, cudaStream_t stream) {
  const bool fast = UseFast(n);
  const FastDivmod dp = fast ? FastDivmod(static_cast<uint32_t>(post)) : FastDivmod();
  const FastDivmod dq = fast ? FastDivmod(static_cast<uint32_t>(q)) : FastDivmod();
  auto launch = [&](auto tag) {
    using T = decltype(tag);
    const auto* g = static_cast<const T*>(dy);
    if (fast) {
      GatherGradKernel<T, I, true><<<BlocksFor(n), kThreads, 0, stream>>>(g, idx, acc, n, dim, q, post, dp, dq);
    } else {
      GatherGradKernel<T, I, false><<<BlocksFor(n), kThreads, 0, stream>>>(g, idx, acc, n, dim, q, post, dp, dq);
    }
    return cudaGetLastError();
  };
  switch (t) {
    case ElemType::kF32: return launch(float{});
    case ElemType::kF16: return launch(F16{});
    case ElemType::kBF16: return launch(BF16{});
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace

cudaError_t LaunchWhere(int elem_size, const void* cond, const void* x, const void* y, void* out, int64_t n,
                        const WhereShape& shape, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  WhereParams p;
  p.rank = shape.rank;
  const bool fast = UseFast(n);
  for (int k = 0; k < shape.rank; ++k) {
    p.dims[k] = shape.dims[k];
    if (fast) p.div[k] = FastDivmod(static_cast<uint32_t>(shape.dims[k]));
    p.c[k] = shape.cond_strides[k];
    p.x[k] = shape.x_strides[k];
    p.y[k] = shape.y_strides[k];
  }
  return BySize(elem_size, [&](auto tag) {
    using W = typename decltype(tag)::type;
    const auto* c = static_cast<const uint8_t*>(cond);
    const auto* px = static_cast<const W*>(x);
    const auto* py = static_cast<const W*>(y);
    auto* po = static_cast<W*>(out);
    if (fast) {
      WhereKernel<W, true><<<BlocksFor(n), kThreads, 0, stream>>>(c, px, py, po, n, p);
    } else {
      WhereKernel<W, false><<<BlocksFor(n), kThreads, 0, stream>>>(c, px, py, po, n, p);
    }
    return cudaGetLastError();
  });
}

cudaError_t LaunchGather(int elem_size, const void* data, const void* indices, bool idx64, void* out,
                         int64_t outer, int64_t dim, int64_t nidx, int64_t inner, cudaStream_t stream) {
  if (outer * nidx * inner == 0) return cudaSuccess;
  // Whole rows move as wide words when their byte length and both buffers allow: every row
  // starts at a multiple of the row length.
  for (int w = 16; w > elem_size; w /= 2) {
    if ((inner * elem_size) % w == 0 && Aligned(data, w) && Aligned(out, w)) {
      inner = inner * elem_size / w;
      elem_size = w;
      break;
    }
  }
  const int64_t n = outer * nidx * inner;
  const bool fast = UseFast(n);
  const FastDivmod di = fast ? FastDivmod(static_cast<uint32_t>(inner)) : FastDivmod();
  const FastDivmod dn = fast ? FastDivmod(static_cast<uint32_t>(nidx)) : FastDivmod();
  return BySize(elem_size, [&](auto tag) {
    using W = typename decltype(tag)::type;
    const auto* pd = static_cast<const W*>(data);
    auto* po = static_cast<W*>(out);
    auto launch = [&](auto itag) {
      using I = decltype(itag);
      const auto* pi = static_cast<const I*>(indices);
      if (fast) {
        GatherKernel<W, I, true><<<BlocksFor(n), kThreads, 0, stream>>>(pd, pi, po, n, dim, nidx, inner, di, dn);
      } else {
        GatherKernel<W, I, false><<<BlocksFor(n), kThreads, 0, stream>>>(pd, pi, po, n, dim, nidx, inner, di, dn);
      }
      return cudaGetLastError();
    };
    return idx64 ? launch(int64_t{}) : launch(int32_t{});
  });
}

cudaError_t LaunchGatherGrad(ElemType t, const void* dy, const void* indices, bool idx64, float* acc, void* dx,
                             int64_t pre, int64_t dim, int64_t q, int64_t post, cudaStream_t stream) {
  const int64_t total = pre * dim * post;
  if (total == 0) return cudaSuccess;
  if (t == ElemType::kF32 && static_cast<void*>(acc) != dx) return cudaErrorInvalidValue;
  cudaError_t err = cudaMemsetAsync(acc, 0, static_cast<size_t>(total) * sizeof(float), stream);
  if (err != cudaSuccess) return err;
  const int64_t n = pre * q * post;
  if (n > 0) {
    err = idx64 ? GatherGradTyped(t, dy, static_cast<const int64_t*>(indices), acc, n, dim, q, post, stream)
                : GatherGradTyped(t, dy, static_cast<const int32_t*>(indices), acc, n, dim, q, post, stream);
    if (err != cudaSuccess) return err;
  }
  if (t == ElemType::kF32) return cudaSuccess;
  return LaunchCast(ElemType::kF32, t, acc, dx, total, stream);
}

}  // namespace memopt::cuda
