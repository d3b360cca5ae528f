#include "exec/kernels/gemm_nt.h"

#include <algorithm>

#include "exec/kernels/kernel_util.h"

#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
#define MEMOPT_GEMM_NT 1
#include <immintrin.h>
// GCC 12's AVX-512 headers seed some intrinsics' results with a self-initialised `__Y`, which
// -Wuninitialized reports wherever they inline.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#else
#define MEMOPT_GEMM_NT 0
#endif

namespace memopt::math {
namespace {

#if MEMOPT_GEMM_NT

#define MEMOPT_AVX512 __attribute__((target("avx512f,avx512vl")))

/// Operand bytes a block of rows may take: a block of a and one of b stay in a core's L2 while
/// every tile between them runs.
constexpr int64_t kBlockBytes = 512 * 1024;
constexpr int kTile = 4;

/// The sums of 16 vectors, v[p] summed into lane p: pairs of vectors interleave and add (each
/// 128-bit lane then holds partial sums of 4 vectors), then 128-bit lanes of groups of 4 exchange
/// and add twice. Lane p = 4 i + j is output (i, j) of the tile.
MEMOPT_AVX512 inline __m512 Sum16(const __m512* v) {
  __m512 quad[4];
  for (int g = 0; g < 4; ++g) {
    const __m512* w = v + 4 * g;
    const __m512 s01 = _mm512_add_ps(_mm512_unpacklo_ps(w[0], w[1]), _mm512_unpackhi_ps(w[0], w[1]));
    const __m512 s23 = _mm512_add_ps(_mm512_unpacklo_ps(w[2], w[3]), _mm512_unpackhi_ps(w[2], w[3]));
    quad[g] = _mm512_add_ps(_mm512_shuffle_ps(s01, s23, _MM_SHUFFLE(1, 0, 1, 0)),
                            _mm512_shuffle_ps(s01, s23, _MM_SHUFFLE(3, 2, 3, 2)));
  }
  const __m512 p = _mm512_add_ps(_mm512_shuffle_f32x4(quad[0], quad[1], _MM_SHUFFLE(2, 0, 2, 0)),
                                 _mm512_shuffle_f32x4(quad[0], quad[1], _MM_SHUFFLE(3, 1, 3, 1)));
  const __m512 q = _mm512_add_ps(_mm512_shuffle_f32x4(quad[2], quad[3], _MM_SHUFFLE(2, 0, 2, 0)),
                                 _mm512_shuffle_f32x4(quad[2], quad[3], _MM_SHUFFLE(3, 1, 3, 1)));
  return _mm512_add_ps(_mm512_shuffle_f32x4(p, q, _MM_SHUFFLE(2, 0, 2, 0)),
                       _mm512_shuffle_f32x4(p, q, _MM_SHUFFLE(3, 1, 3, 1)));
}

struct Epilogue {
  float alpha, beta;
  const float* bias;
  bool accumulate;
};

/// Outputs (i0.., j0..) of `mr` x `nr` (up to 4 x 4): rows of a and b past the edge repeat the
/// last one, and only the valid outputs are stored.
MEMOPT_AVX512 void Tile(const float* a, int64_t lda, const float* b, int64_t ldb, int64_t k, int64_t mr,
                        int64_t nr, const Epilogue& e, int64_t j0, float* y, int64_t ldy) {
  const float* ar[kTile];
  const float* br[kTile];
  for (int i = 0; i < kTile; ++i) ar[i] = a + std::min<int64_t>(i, mr - 1) * lda;
  for (int j = 0; j < kTile; ++j) br[j] = b + std::min<int64_t>(j, nr - 1) * ldb;
  __m512 acc[kTile * kTile];
#pragma GCC unroll 16
  for (int p = 0; p < kTile * kTile; ++p) acc[p] = _mm512_setzero_ps();
  int64_t kk = 0;
  for (; kk + 16 <= k; kk += 16) {
    __m512 av[kTile];
#pragma GCC unroll 4
    for (int i = 0; i < kTile; ++i) av[i] = _mm512_loadu_ps(ar[i] + kk);
#pragma GCC unroll 4
    for (int j = 0; j < kTile; ++j) {
      const __m512 bv = _mm512_loadu_ps(br[j] + kk);
#pragma GCC unroll 4
      for (int i = 0; i < kTile; ++i) acc[i * kTile + j] = _mm512_fmadd_ps(av[i], bv, acc[i * kTile + j]);
    }
  }
  if (kk < k) {  // the last k - kk terms, the other lanes loaded as zeros
    const auto mask = static_cast<__mmask16>((1u << (k - kk)) - 1);
    __m512 av[kTile];
#pragma GCC unroll 4
    for (int i = 0; i < kTile; ++i) av[i] = _mm512_maskz_loadu_ps(mask, ar[i] + kk);
#pragma GCC unroll 4
    for (int j = 0; j < kTile; ++j) {
      const __m512 bv = _mm512_maskz_loadu_ps(mask, br[j] + kk);
#pragma GCC unroll 4
      for (int i = 0; i < kTile; ++i) acc[i * kTile + j] = _mm512_fmadd_ps(av[i], bv, acc[i * kTile + j]);
    }
  }
  __m512 r = _mm512_mul_ps(Sum16(acc), _mm512_set1_ps(e.alpha));
  const auto cols = static_cast<__mmask8>((1u << nr) - 1);
  if (e.bias != nullptr) {
    const __m128 bias = _mm_mul_ps(_mm_maskz_loadu_ps(cols, e.bias + j0), _mm_set1_ps(e.beta));
    r = _mm512_add_ps(r, _mm512_broadcast_f32x4(bias));
  }
  alignas(64) float out[kTile * kTile];
  _mm512_store_ps(out, r);
  for (int64_t i = 0; i < mr; ++i) {
    float* yr = y + i * ldy;
    __m128 o = _mm_load_ps(out + i * kTile);
    if (e.accumulate) o = _mm_add_ps(o, _mm_mul_ps(_mm_maskz_loadu_ps(cols, yr), _mm_set1_ps(e.beta)));
    _mm_mask_storeu_ps(yr, cols, o);
  }
}

bool HasAvx512() {
  static const bool has = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl");
  return has;
}

#endif  // MEMOPT_GEMM_NT

}  // namespace

bool GemmNTApplies(int64_t k) {
#if MEMOPT_GEMM_NT
  return k >= kGemmNTMinK && HasAvx512();
#else
  (void)k;
  return false;
#endif
}

void GemmNT(int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda, const float* b, int64_t ldb,
            const float* bias, float beta, bool accumulate, float* y, int64_t ldy) {
#if MEMOPT_GEMM_NT
  if (m <= 0 || n <= 0) return;
  // Blocks of rows of a and of b (whole tiles) within kBlockBytes each; the blocks are the units
  // spread over the pool, a chunk walking the column blocks of one row block in turn.
  const int64_t rows = std::max<int64_t>(kTile, kBlockBytes / (k * 4) / kTile * kTile);
  const int64_t mb = std::min(rows, (m + kTile - 1) / kTile * kTile), nb = std::min<int64_t>(rows, 64);
  const int64_t row_blocks = (m + mb - 1) / mb, col_blocks = (n + nb - 1) / nb;
  const Epilogue e{alpha, beta, bias, accumulate};
  ParallelFor(row_blocks * col_blocks, mb * nb * k, [&](int64_t first, int64_t last) {
    for (int64_t t = first; t < last; ++t) {
      const int64_t i0 = t / col_blocks * mb, i1 = std::min(m, i0 + mb);
      const int64_t j0 = t % col_blocks * nb, j1 = std::min(n, j0 + nb);
      for (int64_t i = i0; i < i1; i += kTile) {
        for (int64_t j = j0; j < j1; j += kTile) {
          Tile(a + i * lda, lda, b + j * ldb, ldb, k, std::min<int64_t>(kTile, i1 - i), std::min<int64_t>(kTile, j1 - j),
               e, j, y + i * ldy + j, ldy);
        }
      }
    }
  });
#else
  (void)m, (void)n, (void)k, (void)alpha, (void)a, (void)lda, (void)b, (void)ldb, (void)bias, (void)beta,
      (void)accumulate, (void)y, (void)ldy;
#endif
}

}  // namespace memopt::math
