#include "exec/math/vector_math.h"

// Each loop is compiled for AVX-512, AVX2 and the x86-64 baseline, chosen once at load time
// (GCC function multiversioning). This file is built with -ffp-contract=off, so all three give
// the same bits.
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define MEMOPT_VECTOR_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define MEMOPT_VECTOR_CLONES
#endif

namespace memopt::math {

namespace {

/// phi(x) = exp(-x^2/2) / sqrt(2 pi).
inline float NormPdfF(float x) { return 0.3989422804014327f * ExpF(-0.5f * x * x); }

}  // namespace

MEMOPT_VECTOR_CLONES void ExpArray(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = ExpF(x[i]);
}

MEMOPT_VECTOR_CLONES void ErfArray(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = ErfF(x[i]);
}

MEMOPT_VECTOR_CLONES void TanhArray(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = TanhF(x[i]);
}

float ExpShiftedSum(const float* x, const float* bias, float shift, float* y, int64_t n) {
  if (bias != nullptr) {
    for (int64_t i = 0; i < n; ++i) y[i] = (x[i] + bias[i]) - shift;
  } else {
    for (int64_t i = 0; i < n; ++i) y[i] = x[i] - shift;
  }
  ExpArray(y, y, n);
  float part[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (int k = 0; k < 8; ++k) part[k] += y[i + k];
  }
  float sum = ((part[0] + part[4]) + (part[1] + part[5])) + ((part[2] + part[6]) + (part[3] + part[7]));
  for (; i < n; ++i) sum += y[i];
  return sum;
}

MEMOPT_VECTOR_CLONES void GeluArray(const float* x, const float* bias, float* y, int64_t n) {
  if (bias == nullptr) {
    for (int64_t i = 0; i < n; ++i) y[i] = x[i] * NormCdfF(x[i]);
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i] + bias[i];
    y[i] = v * NormCdfF(v);
  }
}

MEMOPT_VECTOR_CLONES void GeluGradArray(const float* dy, const float* x, const float* bias, float* dx, int64_t n) {
  if (bias == nullptr) {
    for (int64_t i = 0; i < n; ++i) dx[i] = dy[i] * (NormCdfF(x[i]) + x[i] * NormPdfF(x[i]));
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i] + bias[i];
    dx[i] = dy[i] * (NormCdfF(v) + v * NormPdfF(v));
  }
}

}  // namespace memopt::math
