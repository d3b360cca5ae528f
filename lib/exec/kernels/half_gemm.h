// Products of float16/bfloat16 matrices, computed in float one output tile at a time.
//
// Converting both operands to float before one float product holds float copies twice their size
// outside the planned arena: gpt2's lm_head took 154 MB for its 77 MB weight and 51 MB for its
// logits, so the process grew 1.5x the arena on a float16 training step. Here each task converts
// only the blocks one output tile needs, at most kHalfTile x kHalfDepth of A and kHalfDepth x
// kHalfTile of B, accumulates the tile in float over the depth with one BLAS call per block, and
// rounds the tile into the output once: under 1 MiB of scratch per thread, for about
// 1 / kHalfTile conversions per multiply-add.
//
// The tile grid depends on the shape alone, and every element's sum runs over the depth blocks
// in order, so the result has the same bits on any thread count.
#pragma once

#include <cstdint>
#include <functional>

#include "ir/dtype.h"

namespace memopt::math {

inline constexpr int64_t kHalfTile = 256;   ///< the largest tile's rows and columns
inline constexpr int64_t kHalfDepth = 256;  ///< depth (k) per converted block

/// Fills an output tile before the products are added: tile[r * ld + c] for output row i0 + r and
/// column j0 + c of batch entry 0 (Gemm's beta * C); the products are then added to it.
using HalfTileInit = std::function<void(int64_t i0, int64_t j0, int64_t rows, int64_t cols, float* tile, int64_t ld)>;

/// One operand as stored: entry e starts at data + offsets[e]; rows are ld elements apart, and
/// `trans` means op(X) is the transpose of the stored matrix (A stored [k, m], B stored [n, k]).
struct HalfOperand {
  const uint16_t* data = nullptr;
  const int64_t* offsets = nullptr;
  int64_t ld = 0;
  bool trans = false;
};

/// For each batch entry e < count: y + e * m * n (row-major [m, n], `dtype` kFloat16 or
/// kBfloat16, as are a and b) = alpha * op(A_e) op(B_e), plus init's tile when given (count 1).
/// Runs on the kernel threads (exec/kernels/kernel_util.h ParallelFor).
void HalfBatchedGemm(DataType dtype, int64_t m, int64_t n, int64_t k, float alpha, const HalfOperand& a,
                     const HalfOperand& b, int64_t count, uint16_t* y, const HalfTileInit& init = nullptr);

/// The tile edge HalfBatchedGemm uses for this shape: kHalfTile, halved (down to 64) while the
/// grid has fewer than 8 tiles, so that small products still spread over the threads.
int64_t HalfTileEdge(int64_t m, int64_t n, int64_t count);

}  // namespace memopt::math
