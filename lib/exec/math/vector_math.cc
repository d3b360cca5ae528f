#include "exec/math/vector_math.h"

// Each loop is compiled for AVX-512, AVX2 and the x86-64 baseline, chosen once at load time
// (exec/math/target_clones.h). This file is built with -ffp-contract=off, so all three give the
// same bits.
#include "exec/math/target_clones.h"

namespace memopt::math {

namespace {

/// phi(x) = exp(-x^2/2) / sqrt(2 pi).
inline float NormPdfF(float x) { return 0.3989422804014327f * ExpF(-0.5f * x * x); }

/// The loops every clone inlines (the row functions and the batch of rows).
__attribute__((always_inline)) inline float RowMaxImpl(const float* x, const float* bias, int64_t n) {
  // 16 running maxima (lanes of one AVX-512 vector), each a select on a comparison: NaN never
  // wins, as in an in-order scan; the maximum does not depend on the order it is taken in.
  constexpr float kLow = -__builtin_inff();
  float part[16];
  for (float& p : part) p = kLow;
  int64_t i = 0;
  if (bias != nullptr) {
    for (; i + 16 <= n; i += 16) {
      for (int k = 0; k < 16; ++k) {
        const float v = x[i + k] + bias[i + k];
        part[k] = v > part[k] ? v : part[k];
      }
    }
  } else {
    for (; i + 16 <= n; i += 16) {
      for (int k = 0; k < 16; ++k) part[k] = x[i + k] > part[k] ? x[i + k] : part[k];
    }
  }
  float mx = kLow;
  for (const float p : part) mx = p > mx ? p : mx;
  for (; i < n; ++i) {
    const float v = bias != nullptr ? x[i] + bias[i] : x[i];
    mx = v > mx ? v : mx;
  }
  return mx;
}

__attribute__((always_inline)) inline float ExpShiftedSumImpl(const float* x, const float* bias, float shift, float* y,
                                                           int64_t n) {
  if (bias != nullptr) {
    for (int64_t i = 0; i < n; ++i) y[i] = (x[i] + bias[i]) - shift;
  } else {
    for (int64_t i = 0; i < n; ++i) y[i] = x[i] - shift;
  }
  for (int64_t i = 0; i < n; ++i) y[i] = ExpF(y[i]);
  float part[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (int k = 0; k < 8; ++k) part[k] += y[i + k];
  }
  float sum = ((part[0] + part[4]) + (part[1] + part[5])) + ((part[2] + part[6]) + (part[3] + part[7]));
  for (; i < n; ++i) sum += y[i];
  return sum;
}

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

MEMOPT_VECTOR_CLONES double DotInDouble(const float* a, const float* b, int64_t n) {
  double part[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (int k = 0; k < 8; ++k) part[k] += static_cast<double>(a[i + k]) * static_cast<double>(b[i + k]);
  }
  double sum = ((part[0] + part[4]) + (part[1] + part[5])) + ((part[2] + part[6]) + (part[3] + part[7]));
  for (; i < n; ++i) sum += static_cast<double>(a[i]) * static_cast<double>(b[i]);
  return sum;
}

MEMOPT_VECTOR_CLONES void ScaleArray(float* y, float scale, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] *= scale;
}

MEMOPT_VECTOR_CLONES float RowMax(const float* x, const float* bias, int64_t n) { return RowMaxImpl(x, bias, n); }

MEMOPT_VECTOR_CLONES float ExpShiftedSum(const float* x, const float* bias, float shift, float* y, int64_t n) {
  return ExpShiftedSumImpl(x, bias, shift, y, n);
}

MEMOPT_VECTOR_CLONES void SoftmaxRows(const float* x, float* y, int64_t rows, int64_t n, bool log_softmax) {
  // Per row: the max, then exp(x - max) and its sum in one pass of 16 lanes (16 interleaved
  // partial sums, a fixed tree, then the tail in order), then the scale.
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * n;
    float* yr = y + r * n;
    float mx = RowMaxImpl(xr, nullptr, n);
    if (mx == -__builtin_inff()) mx = 0;  // every value -inf (or NaN): avoid inf - inf
    float part[16] = {};
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
      for (int k = 0; k < 16; ++k) {
        const float e = ExpF(xr[i + k] - mx);
        yr[i + k] = e;
        part[k] += e;
      }
    }
    for (int w = 8; w >= 1; w /= 2) {
      for (int k = 0; k < w; ++k) part[k] += part[k + w];
    }
    float sum = part[0];
    for (; i < n; ++i) sum += yr[i] = ExpF(xr[i] - mx);
    if (log_softmax) {
      const float log_sum = std::log(sum);
      for (int64_t j = 0; j < n; ++j) yr[j] = (xr[j] - mx) - log_sum;
    } else {
      const float inv = 1.0f / sum;
      for (int64_t j = 0; j < n; ++j) yr[j] *= inv;
    }
  }
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
