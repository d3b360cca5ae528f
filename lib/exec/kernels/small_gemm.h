// Small float products y = alpha * op(a) op(b), one per batch entry, without a BLAS call each.
//
// Attention's batched products ([batch x heads] matrices of seq x head_dim by head_dim x seq and
// back) are thousands of products of a few thousand to a few hundred thousand multiply-adds; one
// BLAS call per matrix spends as long again on the call, its checks and its packing as on the
// arithmetic. Here op(b) is copied once per product into a row-major [k, n] panel (n rounded up to
// the vector width, zero-padded), and register tiles of up to 4 rows x 64 columns of y accumulate
// over k: one broadcast of a(i, kk) times one panel row per step. Every output's sum runs over k
// in order, one product per call: neither the tiling nor the thread count changes a bit.
#pragma once

#include <cstdint>

namespace memopt::math {

/// Whether SmallGemm serves an m x n x k product on this CPU (AVX-512 or AVX2 with FMA) and the
/// product is small enough for a BLAS call's overhead to matter (kSmallGemmMaxMacs).
bool SmallGemmApplies(int64_t m, int64_t n, int64_t k);
inline constexpr int64_t kSmallGemmMaxMacs = int64_t{1} << 18;

/// One product: y[i][j] = alpha * sum_kk A(i, kk) B(kk, j), A(i, kk) = trans_a ? a[kk * lda + i] :
/// a[i * lda + kk], B(kk, j) = trans_b ? b[j * ldb + kk] : b[kk * ldb + j]; y row-major with row
/// stride ldy. Single-threaded (the caller runs batch entries in parallel). Only where
/// SmallGemmApplies.
void SmallGemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
               const float* b, int64_t ldb, float* y, int64_t ldy);

/// Panel rows are padded to this many floats (one AVX-512 vector).
inline constexpr int64_t kSmallGemmPad = 16;

/// Whether this CPU runs SmallGemmOnPanel (AVX-512 or AVX2 with FMA).
bool SmallGemmPanelApplies();

/// y[i][j] = alpha * sum_kk A(i, kk) panel[kk * ldp + j] for columns j < n, A as in SmallGemm:
/// the right-hand matrix already row-major [k, ldp] (a recurrent op's R, laid out once and read
/// every step). Vectors of kSmallGemmPad columns are read whole: the panel must hold
/// kSmallGemmPad - 1 readable floats past column n - 1 of its last row (their values never reach
/// y). Single-threaded; callers split columns (panel + j0, y + j0) over threads. Only where
/// SmallGemmPanelApplies.
void SmallGemmOnPanel(bool trans_a, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
                      const float* panel, int64_t ldp, float* y, int64_t ldy);

}  // namespace memopt::math
