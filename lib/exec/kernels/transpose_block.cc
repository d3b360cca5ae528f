#include "exec/kernels/transpose_block.h"

#include <atomic>

#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
#define MEMOPT_TRANSPOSE_AVX 1
#include <immintrin.h>
#else
#define MEMOPT_TRANSPOSE_AVX 0
#endif

namespace memopt {
namespace {

std::atomic<bool> force_scalar{false};

void Scalar(const uint32_t* src, int64_t src_stride, uint32_t* dst, int64_t dst_stride, int64_t r0, int64_t r1,
            int64_t c0, int64_t c1) {
  for (int64_t c = c0; c < c1; ++c) {
    for (int64_t r = r0; r < r1; ++r) dst[c * dst_stride + r] = src[r * src_stride + c];
  }
}

#if MEMOPT_TRANSPOSE_AVX

/// The 8x8 square at src (rows src_stride apart) into dst (rows dst_stride apart): pairs of rows
/// interleave, then pairs of pairs, then the 128-bit halves exchange.
__attribute__((target("avx"))) void Square8(const uint32_t* src, int64_t src_stride, uint32_t* dst,
                                            int64_t dst_stride) {
  __m256 r[8], t[8], s[8];
  for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(reinterpret_cast<const float*>(src + i * src_stride));
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 8; i += 4) {
    s[i] = _mm256_shuffle_ps(t[i], t[i + 2], 0x44);
    s[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], 0xEE);
    s[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0x44);
    s[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
  }
  for (int i = 0; i < 4; ++i) {
    _mm256_storeu_ps(reinterpret_cast<float*>(dst + i * dst_stride), _mm256_permute2f128_ps(s[i], s[i + 4], 0x20));
    _mm256_storeu_ps(reinterpret_cast<float*>(dst + (i + 4) * dst_stride),
                     _mm256_permute2f128_ps(s[i], s[i + 4], 0x31));
  }
}

__attribute__((target("avx"))) void Blocked(const uint32_t* src, int64_t src_stride, uint32_t* dst,
                                            int64_t dst_stride, int64_t rows, int64_t cols) {
  const int64_t rows8 = rows / 8 * 8, cols8 = cols / 8 * 8;
  for (int64_t r = 0; r < rows8; r += 8) {
    for (int64_t c = 0; c < cols8; c += 8) Square8(src + r * src_stride + c, src_stride, dst + c * dst_stride + r, dst_stride);
  }
  Scalar(src, src_stride, dst, dst_stride, 0, rows8, cols8, cols);  // the right edge
  Scalar(src, src_stride, dst, dst_stride, rows8, rows, 0, cols);   // the bottom edge
}

bool HasAvx() {
  static const bool has = __builtin_cpu_supports("avx");
  return has;
}

#endif  // MEMOPT_TRANSPOSE_AVX

}  // namespace

void TransposeBlock4(const uint32_t* src, int64_t src_stride, uint32_t* dst, int64_t dst_stride, int64_t rows,
                     int64_t cols) {
#if MEMOPT_TRANSPOSE_AVX
  if (HasAvx() && !force_scalar.load(std::memory_order_relaxed)) {
    Blocked(src, src_stride, dst, dst_stride, rows, cols);
    return;
  }
#endif
  Scalar(src, src_stride, dst, dst_stride, 0, rows, 0, cols);
}

void TransposeBlockScalarForTesting(bool scalar) { force_scalar.store(scalar, std::memory_order_relaxed); }

}  // namespace memopt
