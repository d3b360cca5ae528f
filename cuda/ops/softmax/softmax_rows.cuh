// Row geometry and group reductions shared by softmax.cu and sce_loss.cu. A row (see
// softmax_launch.h) is handled by a "group" of G threads: G = 1 (a thread per row: rows along a
// middle axis, where neighbouring rows are neighbouring in memory, or very short rows), G = 32 (a
// warp per row: short contiguous rows) or G = kThreads (a block per row: long rows). The lanes of
// a group stride over the row, so the reductions are deterministic for a given shape.
#pragma once

#include <type_traits>

#include "common.cuh"
#include "softmax_launch.h"

namespace memopt::cuda {

enum class RowGroup { kThread, kWarp, kBlock };

inline RowGroup PickRowGroup(const RowShape& s) {
  if (s.len <= 8) return RowGroup::kThread;
  // Rows along a middle axis: a thread per row reads neighbouring addresses across a warp, but
  // leaves long rows with few threads when there are few rows; then a group strides instead.
  if (s.inner > 1 && (s.outer * s.inner >= 8192 || s.len <= 32)) return RowGroup::kThread;
  return s.len <= 1024 ? RowGroup::kWarp : RowGroup::kBlock;
}

/// Blocks of kThreads for `rows` groups of G threads (capped: groups loop over the rest).
inline unsigned RowBlocks(int64_t rows, int g) {
  const int64_t per_block = kThreads / g;
  const int64_t blocks = (rows + per_block - 1) / per_block;
  return static_cast<unsigned>(blocks < 1 ? 1 : blocks < 65536 ? blocks : 65536);
}

/// Calls f(std::integral_constant<int, G>) with the group size chosen for `s`.
template <typename F>
void ForRowGroup(const RowShape& s, F&& f) {
  switch (PickRowGroup(s)) {
    case RowGroup::kThread: f(std::integral_constant<int, 1>{}); break;
    case RowGroup::kWarp: f(std::integral_constant<int, 32>{}); break;
    case RowGroup::kBlock: f(std::integral_constant<int, kThreads>{}); break;
  }
}

/// Loop over the rows of group size G: `for (int64_t r = FirstRow<G>(); r < rows; r += RowStep<G>())`.
template <int G>
__device__ inline int64_t FirstRow() {
  return static_cast<int64_t>(blockIdx.x) * (kThreads / G) + threadIdx.x / G;
}
template <int G>
__device__ inline int64_t RowStep() {
  return static_cast<int64_t>(gridDim.x) * (kThreads / G);
}
template <int G>
__device__ inline int Lane() {
  return static_cast<int>(threadIdx.x % G);
}

/// Offset of element 0 of row r; the row's elements are `s.inner` apart.
__device__ inline int64_t RowBase(const RowShape& s, int64_t r) {
  const int64_t o = r / s.inner;
  return o * s.len * s.inner + (r - o * s.inner);
}

struct SumOp {
  template <typename V>
  __device__ V operator()(V a, V b) const { return a + b; }
};
/// fmaxf ignores NaN, as the CPU's `v > max` scan does.
struct MaxOp {
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};

/// Reduces v over the G threads of a group; every thread of the group gets the result. For
/// G > 32 (a block of G threads), `smem` is 32 entries of block-shared scratch; all threads of
/// the block call it.
template <int G, typename V, typename Op>
__device__ V GroupReduce(V v, Op op, V identity, V* smem) {
  if constexpr (G == 1) {
    (void)op;
    (void)identity;
    (void)smem;
    return v;
  } else {
    static_assert(G % 32 == 0 && G <= 1024, "groups are a thread, a warp or a block");
    for (int o = 16; o > 0; o >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
    if constexpr (G > 32) {
      const int lane = static_cast<int>(threadIdx.x & 31), warp = static_cast<int>(threadIdx.x >> 5);
      __syncthreads();  // the previous reduction's readers are done with smem
      if (lane == 0) smem[warp] = v;
      __syncthreads();
      v = lane < G / 32 ? smem[lane] : identity;
      for (int o = 16; o > 0; o >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
    } else {
      (void)identity;
      (void)smem;
    }
    return v;
  }
}

/// Element i of a float32/float16/bfloat16 array whose type is known only at run time (a
/// uniform branch): the cross-entropy ops' weights, dY and outputs, whose types may differ from
/// the scores'.
__device__ inline float LoadAny(ElemType t, const void* p, int64_t i) {
  switch (t) {
    case ElemType::kF16: return Elem<F16>::Load(static_cast<const F16*>(p)[i]);
    case ElemType::kBF16: return Elem<BF16>::Load(static_cast<const BF16*>(p)[i]);
    default: return static_cast<const float*>(p)[i];
  }
}
__device__ inline void StoreAny(ElemType t, void* p, int64_t i, float v) {
  switch (t) {
    case ElemType::kF16: static_cast<F16*>(p)[i] = Elem<F16>::Store(v); break;
    case ElemType::kBF16: static_cast<BF16*>(p)[i] = Elem<BF16>::Store(v); break;
    default: static_cast<float*>(p)[i] = v; break;
  }
}

}  // namespace memopt::cuda
