#include "exec/kernels/small_gemm.h"

#include <algorithm>
#include <cstring>
#include <vector>

namespace memopt::math {
namespace {

/// Panel rows are padded to this many floats (one AVX-512 vector, two AVX2 ones).
constexpr int64_t kPad = kSmallGemmPad;
/// Columns of one register tile.
constexpr int64_t kCols = 64;

/// Rows [i0, i0 + R) x columns [j0, j0 + C) of y (C a multiple of kPad, within the padded panel):
/// R x C accumulators in vectors of V floats (GCC vector extensions: zmm or ymm registers), summed
/// over k in order, then the valid columns stored.
template <int R, int C, typename V>
__attribute__((always_inline)) inline void TileBody(const float* a, int64_t lda, bool trans_a, const float* panel,
                                                    int64_t ldp, int64_t k, int64_t i0, int64_t j0, int64_t n,
                                                    float alpha, float* y, int64_t ldy) {
  constexpr int kWidth = sizeof(V) / sizeof(float);
  constexpr int kVecs = C / kWidth;
  V acc[R][kVecs];
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < kVecs; ++c) acc[r][c] = V{} ;
  for (int64_t kk = 0; kk < k; ++kk) {
    const float* p = panel + kk * ldp + j0;
    V pv[kVecs];
    for (int c = 0; c < kVecs; ++c) std::memcpy(&pv[c], p + c * kWidth, sizeof(V));
    for (int r = 0; r < R; ++r) {
      const float av = trans_a ? a[kk * lda + i0 + r] : a[(i0 + r) * lda + kk];
      for (int c = 0; c < kVecs; ++c) acc[r][c] += av * pv[c];
    }
  }
  const int64_t valid = std::min<int64_t>(C, n - j0);
  for (int r = 0; r < R; ++r) {
    float* yr = y + (i0 + r) * ldy + j0;
    if (valid == C) {
      for (int c = 0; c < kVecs; ++c) {
        const V out = alpha * acc[r][c];
        std::memcpy(yr + c * kWidth, &out, sizeof(V));
      }
    } else {
      float row[C];
      for (int c = 0; c < kVecs; ++c) {
        const V out = alpha * acc[r][c];
        std::memcpy(row + c * kWidth, &out, sizeof(V));
      }
      std::memcpy(yr, row, static_cast<size_t>(valid) * sizeof(float));
    }
  }
}

/// Rows per tile: 16 AVX-512 accumulators in all (8 rows of one vector, 4 of up to four), so that
/// enough independent sums are in flight to cover the multiply-add latency.
template <int C, typename V>
__attribute__((always_inline)) inline void Tiles(const float* a, int64_t lda, bool trans_a, const float* panel,
                                                 int64_t ldp, int64_t m, int64_t n, int64_t k, int64_t j0,
                                                 float alpha, float* y, int64_t ldy) {
  constexpr int kRows = C <= 16 ? 8 : (C <= 32 ? 6 : 4);
  int64_t i = 0;
  for (; i + kRows <= m; i += kRows) TileBody<kRows, C, V>(a, lda, trans_a, panel, ldp, k, i, j0, n, alpha, y, ldy);
  for (; i + 2 <= m; i += 2) TileBody<2, C, V>(a, lda, trans_a, panel, ldp, k, i, j0, n, alpha, y, ldy);
  for (; i < m; ++i) TileBody<1, C, V>(a, lda, trans_a, panel, ldp, k, i, j0, n, alpha, y, ldy);
}

#define MEMOPT_SMALL_GEMM_BODY                                                                         \
  for (int64_t j0 = 0; j0 < np; j0 += kCols) {                                                          \
    switch (std::min(kCols, np - j0)) {                                                                 \
      case 64:                                                                                          \
        Tiles<64, V>(a, lda, trans_a, panel, ldp, m, n, k, j0, alpha, y, ldy);                             \
        break;                                                                                          \
      case 48:                                                                                          \
        Tiles<48, V>(a, lda, trans_a, panel, ldp, m, n, k, j0, alpha, y, ldy);                             \
        break;                                                                                          \
      case 32:                                                                                          \
        Tiles<32, V>(a, lda, trans_a, panel, ldp, m, n, k, j0, alpha, y, ldy);                             \
        break;                                                                                          \
      default:                                                                                          \
        Tiles<16, V>(a, lda, trans_a, panel, ldp, m, n, k, j0, alpha, y, ldy);                             \
    }                                                                                                   \
  }

#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
#define MEMOPT_SMALL_GEMM_X86 1
typedef float V16 __attribute__((vector_size(64)));
typedef float V8 __attribute__((vector_size(32)));
__attribute__((target("avx512f,avx2,fma"))) void RunAvx512(const float* a, int64_t lda, bool trans_a,
                                                           const float* panel, int64_t ldp, int64_t np, int64_t m,
                                                           int64_t n, int64_t k, float alpha, float* y, int64_t ldy) {
  using V = V16;
  MEMOPT_SMALL_GEMM_BODY
}
__attribute__((target("avx2,fma"))) void RunAvx2(const float* a, int64_t lda, bool trans_a, const float* panel,
                                                 int64_t ldp, int64_t np, int64_t m, int64_t n, int64_t k, float alpha,
                                                 float* y, int64_t ldy) {
  using V = V8;
  MEMOPT_SMALL_GEMM_BODY
}
bool HasAvx512() {
  static const bool has = __builtin_cpu_supports("avx512f");
  return has;
}
bool HasAvx2() {
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return has;
}
#else
#define MEMOPT_SMALL_GEMM_X86 0
#endif

}  // namespace

bool SmallGemmApplies(int64_t m, int64_t n, int64_t k) {
#if MEMOPT_SMALL_GEMM_X86
  if (!HasAvx512() && !HasAvx2()) return false;
  return m > 0 && n > 0 && k > 0 && m * n * k <= kSmallGemmMaxMacs;
#else
  (void)m, (void)n, (void)k;
  return false;
#endif
}

void SmallGemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
               const float* b, int64_t ldb, float* y, int64_t ldy) {
#if MEMOPT_SMALL_GEMM_X86
  const int64_t np = (n + kPad - 1) / kPad * kPad;
  // The panel: B as row-major [k, np], zero-padded (a thread's own buffer, reused across calls).
  thread_local std::vector<float> buffer;
  buffer.assign(static_cast<size_t>(k * np), 0.0f);
  float* panel = buffer.data();
  for (int64_t kk = 0; kk < k; ++kk) {
    float* row = panel + kk * np;
    if (trans_b) {
      for (int64_t j = 0; j < n; ++j) row[j] = b[j * ldb + kk];
    } else {
      std::memcpy(row, b + kk * ldb, static_cast<size_t>(n) * sizeof(float));
    }
  }
  SmallGemmOnPanel(trans_a, m, n, k, alpha, a, lda, panel, np, y, ldy);
#else
  (void)trans_a, (void)trans_b, (void)m, (void)n, (void)k, (void)alpha, (void)a, (void)lda, (void)b, (void)ldb,
      (void)y, (void)ldy;
#endif
}

bool SmallGemmPanelApplies() {
#if MEMOPT_SMALL_GEMM_X86
  return HasAvx512() || HasAvx2();
#else
  return false;
#endif
}

void SmallGemmOnPanel(bool trans_a, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
                      const float* panel, int64_t ldp, float* y, int64_t ldy) {
#if MEMOPT_SMALL_GEMM_X86
  if (m <= 0 || n <= 0) return;
  const int64_t np = (n + kPad - 1) / kPad * kPad;
  if (k <= 0) {
    for (int64_t i = 0; i < m; ++i) std::fill(y + i * ldy, y + i * ldy + n, 0.0f);
    return;
  }
  if (HasAvx512()) {
    RunAvx512(a, lda, trans_a, panel, ldp, np, m, n, k, alpha, y, ldy);
  } else {
    RunAvx2(a, lda, trans_a, panel, ldp, np, m, n, k, alpha, y, ldy);
  }
#else
  (void)trans_a, (void)m, (void)n, (void)k, (void)alpha, (void)a, (void)lda, (void)panel, (void)ldp, (void)y,
      (void)ldy;
#endif
}

}  // namespace memopt::math
