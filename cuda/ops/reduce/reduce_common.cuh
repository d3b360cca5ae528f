// Device building blocks shared by the reductions (reduce.cu) and the normalisations (norm.cu,
// norm_grad.cu): deterministic group reductions, the row reduction (one warp or block per
// output) and the two-pass chunked column reduction (reduce_launch.h's ColumnPlan), whose first
// pass reads one column or a 16-byte vector of columns per thread.
//
// A reduction is described by an Op (Acc type, Init, Add(acc, element), Merge(acc, acc)), a Src
// (Load(o, r, c): the element at outer index o, reduced index r, column c, in whatever type Add
// takes; kMaxVec, and when it is over 1 LoadVec<kMaxVec>(o, r, c, float* out): columns c .. c+V-1) and an Out (Store(j, acc): finishes and writes output j). Every merge happens in an
// order fixed by the launch geometry, which depends on the shape only: results are reproducible.
#pragma once

#include <type_traits>
#include <utility>

#include "common.cuh"
#include "reduce_launch.h"

namespace memopt::cuda {

__device__ inline float ShflXor(float v, int lane_mask) { return __shfl_xor_sync(0xffffffffu, v, lane_mask); }
__device__ inline float2 ShflXor(float2 v, int lane_mask) {
  return make_float2(ShflXor(v.x, lane_mask), ShflXor(v.y, lane_mask));
}

/// Merges `acc` over a group of G threads: G == 32, the calling warp (all its lanes must call);
/// G a multiple of 32, the whole block of G threads (all must call; it synchronises, and `red`
/// holds G / 32 accumulators). Every thread of the group gets the result.
template <int G, typename Op>
__device__ typename Op::Acc GroupReduce(const Op& op, typename Op::Acc acc, typename Op::Acc* red) {
  for (int mask = 16; mask > 0; mask >>= 1) acc = op.Merge(acc, ShflXor(acc, mask));
  if constexpr (G > 32) {
    __syncthreads();  // the previous call's readers are done with red
    if ((threadIdx.x & 31) == 0) red[threadIdx.x / 32] = acc;
    __syncthreads();
    acc = red[0];
    for (int w = 1; w < G / 32; ++w) acc = op.Merge(acc, red[w]);
  }
  return acc;
}

struct SumOp {
  using Acc = float;
  __device__ float Init() const { return 0.0f; }
  __device__ float Add(float a, float v) const { return a + v; }
  __device__ float Merge(float a, float b) const { return a + b; }
};

/// Two sums at once (the normalisation gradients' dScale and dBias).
struct Sum2Op {
  using Acc = float2;
  __device__ float2 Init() const { return make_float2(0.0f, 0.0f); }
  __device__ float2 Add(float2 a, float2 v) const { return make_float2(a.x + v.x, a.y + v.y); }
  __device__ float2 Merge(float2 a, float2 b) const { return make_float2(a.x + b.x, a.y + b.y); }
};

/// Rows of `len` elements, one group of G threads (a warp or the block) per row, kThreads per
/// block; out.Store(row, acc) by the group's first thread.
template <int G, typename Op, typename Src, typename Out>
__global__ void __launch_bounds__(kThreads) RowReduceKernel(Op op, Src src, Out out, int64_t rows, int64_t len) {
  using Acc = typename Op::Acc;
  __shared__ Acc red[kThreads / 32];
  constexpr int kRowsPerBlock = kThreads / G;
  const int lane = threadIdx.x % G;
  // For G == kThreads every thread of the block sees the same rows (GroupReduce synchronises).
  for (int64_t base = static_cast<int64_t>(blockIdx.x) * kRowsPerBlock; base < rows;
       base += static_cast<int64_t>(gridDim.x) * kRowsPerBlock) {
    const int64_t row = base + threadIdx.x / G;
    if (row >= rows) continue;  // G == 32 only: the whole warp skips
    Acc acc = op.Init();
    for (int64_t i = lane; i < len; i += G) acc = op.Add(acc, src.Load(row, i, 0));
    acc = GroupReduce<G>(op, acc, red);
    if (lane == 0) out.Store(row, acc);
  }
}

template <typename Op, typename Src, typename Out>
cudaError_t LaunchRowReduce(const Op& op, const Src& src, const Out& out, int64_t rows, int64_t len,
                            cudaStream_t stream) {
  if (rows == 0) return cudaSuccess;
  // A warp per row up to 2048 elements (64 per lane); longer rows get the whole block.
  if (len <= 2048) {
    const int64_t blocks = (rows + kThreads / 32 - 1) / (kThreads / 32);
    RowReduceKernel<32><<<static_cast<unsigned>(blocks < 65536 ? blocks : 65536), kThreads, 0, stream>>>(
        op, src, out, rows, len);
  } else {
    RowReduceKernel<kThreads><<<static_cast<unsigned>(rows < 65536 ? rows : 65536), kThreads, 0, stream>>>(
        op, src, out, rows, len);
  }
  return cudaGetLastError();
}

/// Row r's V columns from c into v: one element as Src loads it (V == 1, in whatever type Op::Add
/// takes), or V elements in float by one access (Src::LoadVec<V>).
template <int V, typename Src>
using ColumnValue = std::conditional_t<V == 1, decltype(std::declval<const Src&>().Load(0, 0, 0)), float>;
template <int V, typename Src>
__device__ inline void LoadColumns(const Src& src, int64_t o, int64_t r, int64_t c, ColumnValue<V, Src>* v) {
  if constexpr (V == 1) {
    v[0] = src.Load(o, r, c);
  } else {
    src.template LoadVec<V>(o, r, c, v);
  }
}

/// First pass of the column reduction (see ColumnPlan), V = p.vec columns per thread: block
/// (x, y, z) folds columns [x * tx * V, (x + 1) * tx * V) over rows [y * chunk_rows, ...) for
/// outer indices z, z + gridDim.z, ... Row lane ty folds rows ty, ty + ty_count, ... in order,
/// four rows' loads in flight at a time; then the row lanes are merged by a fixed tree in shared
/// memory.
template <int V, typename Op, typename Src, typename Out>
__global__ void __launch_bounds__(kThreads)
    ColumnReduceKernel(Op op, Src src, Out out, ColumnPlan p, typename Op::Acc* partials) {
  using Acc = typename Op::Acc;
  using Value = ColumnValue<V, Src>;
  __shared__ Acc red[kThreads * V];
  const int tx = threadIdx.x, ty = threadIdx.y, bx = blockDim.x, by = blockDim.y;
  const int64_t c = (static_cast<int64_t>(blockIdx.x) * bx + tx) * V;
  const int64_t r0 = static_cast<int64_t>(blockIdx.y) * p.chunk_rows;
  const int64_t r1 = r0 + p.chunk_rows < p.rows ? r0 + p.chunk_rows : p.rows;
  Acc* mine = red + (ty * bx + tx) * V;
  for (int64_t o = blockIdx.z; o < p.outer; o += gridDim.z) {
    Acc acc[V];
#pragma unroll
    for (int e = 0; e < V; ++e) acc[e] = op.Init();
    if (c < p.cols) {
      int64_t r = r0 + ty;
      for (; r + 3 * by < r1; r += 4 * by) {
        Value v[4][V];
#pragma unroll
        for (int k = 0; k < 4; ++k) LoadColumns<V>(src, o, r + k * by, c, v[k]);
#pragma unroll
        for (int k = 0; k < 4; ++k) {
#pragma unroll
          for (int e = 0; e < V; ++e) acc[e] = op.Add(acc[e], v[k][e]);
        }
      }
      for (; r < r1; r += by) {
        Value v[V];
        LoadColumns<V>(src, o, r, c, v);
#pragma unroll
        for (int e = 0; e < V; ++e) acc[e] = op.Add(acc[e], v[e]);
      }
    }
#pragma unroll
    for (int e = 0; e < V; ++e) mine[e] = acc[e];
    __syncthreads();
    for (int s = by / 2; s > 0; s >>= 1) {
      if (ty < s) {
        const Acc* other = red + ((ty + s) * bx + tx) * V;
#pragma unroll
        for (int e = 0; e < V; ++e) mine[e] = op.Merge(mine[e], other[e]);
      }
      __syncthreads();
    }
    if (ty == 0 && c < p.cols) {
#pragma unroll
      for (int e = 0; e < V; ++e) {
        const int64_t j = o * p.cols + c + e;
        if (gridDim.y == 1) {
          out.Store(j, mine[e]);
        } else {
          partials[static_cast<int64_t>(blockIdx.y) * p.outer * p.cols + j] = mine[e];
        }
      }
    }
    __syncthreads();  // red is refilled for the next outer index
  }
}

/// Second pass: output j = the chunks' partial results for j, merged by a block of kFinishCols x
/// kFinishLanes threads: lane ty folds chunks ty, ty + kFinishLanes, ... in order (their loads
/// independent, so they overlap), then the lanes merge by a fixed tree.
constexpr int kFinishCols = 32;
constexpr int kFinishLanes = kThreads / kFinishCols;
template <typename Op, typename Out>
__global__ void __launch_bounds__(kThreads)
    ColumnFinishKernel(Op op, Out out, const typename Op::Acc* partials, int chunks, int64_t n) {
  using Acc = typename Op::Acc;
  __shared__ Acc red[kThreads];
  const int tx = threadIdx.x % kFinishCols, ty = threadIdx.x / kFinishCols;
  for (int64_t j0 = static_cast<int64_t>(blockIdx.x) * kFinishCols; j0 < n;
       j0 += static_cast<int64_t>(gridDim.x) * kFinishCols) {
    const int64_t j = j0 + tx;
    Acc acc = op.Init();
    if (j < n) {
#pragma unroll 4
      for (int k = ty; k < chunks; k += kFinishLanes) acc = op.Merge(acc, partials[static_cast<int64_t>(k) * n + j]);
    }
    red[threadIdx.x] = acc;
    __syncthreads();
    for (int s = kFinishLanes / 2; s > 0; s >>= 1) {
      if (ty < s) red[threadIdx.x] = op.Merge(red[threadIdx.x], red[threadIdx.x + s * kFinishCols]);
      __syncthreads();
    }
    if (ty == 0 && j < n) out.Store(j, red[tx]);
    __syncthreads();  // red is refilled for the next columns
  }
}

/// `partials`: p.partials() accumulators (unused with one chunk). p.vec is 1 or Src::kMaxVec.
template <typename Op, typename Src, typename Out>
cudaError_t LaunchColumnReduce(const Op& op, const Src& src, const Out& out, const ColumnPlan& p,
                               typename Op::Acc* partials, cudaStream_t stream) {
  if (p.outer == 0 || p.cols == 0) return cudaSuccess;
  const dim3 grid(static_cast<unsigned>(p.col_tiles), static_cast<unsigned>(p.chunks),
                  static_cast<unsigned>(p.outer_blocks));
  const dim3 block(static_cast<unsigned>(p.tx), static_cast<unsigned>(p.ty));
  if (p.vec == 1) {
    ColumnReduceKernel<1><<<grid, block, 0, stream>>>(op, src, out, p, partials);
  } else if constexpr (Src::kMaxVec > 1) {
    if (p.vec != Src::kMaxVec) return cudaErrorInvalidValue;
    ColumnReduceKernel<Src::kMaxVec><<<grid, block, 0, stream>>>(op, src, out, p, partials);
  } else {
    return cudaErrorInvalidValue;
  }
  if (p.chunks > 1) {
    const int64_t n = p.outer * p.cols;
    const int64_t blocks = (n + kFinishCols - 1) / kFinishCols;
    ColumnFinishKernel<<<static_cast<unsigned>(blocks < 65536 ? blocks : 65536), kThreads, 0, stream>>>(
        op, out, partials, p.chunks, n);
  }
  return cudaGetLastError();
}

/// Calls fn(In{}, Out{}) with the element types of a pair: equal, or one of them float.
template <typename Fn>
cudaError_t DispatchTypePair(ElemType in, ElemType out, Fn&& fn) {
  if (in == out) {
    switch (in) {
      case ElemType::kF32: return fn(float{}, float{});
      case ElemType::kF16: return fn(F16{}, F16{});
      case ElemType::kBF16: return fn(BF16{}, BF16{});
      default: return cudaErrorInvalidValue;
    }
  }
  if (out == ElemType::kF32) {
    if (in == ElemType::kF16) return fn(F16{}, float{});
    if (in == ElemType::kBF16) return fn(BF16{}, float{});
  }
  if (in == ElemType::kF32) {
    if (out == ElemType::kF16) return fn(float{}, F16{});
    if (out == ElemType::kBF16) return fn(float{}, BF16{});
  }
  return cudaErrorInvalidValue;
}

}  // namespace memopt::cuda
