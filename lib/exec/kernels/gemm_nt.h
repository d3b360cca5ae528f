// A float product y = alpha * a b^T (+ beta * bias per column, + beta * y) straight from the
// row-major operands, for the Gemm op's transB=1 form (a Linear layer: weights [out, in]).
//
// Both operands are contiguous along k, so a 4x4 register tile of outputs takes 16-float vectors
// of 4 rows of a and 4 rows of b and keeps 16 vector sums; nothing is packed, where BLAS copies
// the weights into its panel layout on every call (a tenth of the MLP's forward step). One
// transposing add tree turns the 16 sums into the tile's outputs. AVX-512 only; elsewhere the
// caller keeps BLAS.
#pragma once

#include <cstdint>

namespace memopt::math {

/// Whether GemmNT serves a product of inner size k on this CPU: AVX-512, and k long enough
/// (kGemmNTMinK) for the add tree to be a small part of each output's work.
bool GemmNTApplies(int64_t k);
inline constexpr int64_t kGemmNTMinK = 128;

/// y[i][j] = alpha * sum_k a[i][k] b[j][k] + (bias ? beta * bias[j] : 0) + (accumulate ? beta *
/// y[i][j] : 0) for i < m, j < n; a [m, k] with row stride lda, b [n, k] with row stride ldb, y
/// [m, n] with row stride ldy. Each output's sum runs over k in one fixed order (16 interleaved
/// partial sums, then a fixed tree), so neither the tiling nor the thread count changes it. Runs
/// its column blocks over the thread pool. Only where GemmNTApplies(k).
void GemmNT(int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda, const float* b, int64_t ldb,
            const float* bias, float beta, bool accumulate, float* y, int64_t ldy);

}  // namespace memopt::math
