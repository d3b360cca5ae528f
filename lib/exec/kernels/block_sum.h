// Fast, accurate sums for the normalisation kernels' statistics.
//
// A plain `double s += x[i]` loop is one dependent add chain the compiler may not reorder, so it
// runs at one element per add latency. BlockSum keeps 16 independent partial sums in the compute
// type (they vectorise), over blocks of 256 terms, and adds each block's total into a double:
// float rounding reaches only 16 terms per partial, the rest is summed in double.
#pragma once

#include <cstdint>

namespace memopt {

inline constexpr int64_t kBlockSumLanes = 16;
inline constexpr int64_t kBlockSumBlock = 256;

/// sum over i in [0, n) of term(i), with term returning C (float or double).
template <typename C, typename F>
double BlockSum(int64_t n, F&& term) {
  double total = 0;
  for (int64_t start = 0; start < n; start += kBlockSumBlock) {
    const int64_t stop = start + kBlockSumBlock < n ? start + kBlockSumBlock : n;
    C part[kBlockSumLanes] = {};
    int64_t i = start;
    for (; i + kBlockSumLanes <= stop; i += kBlockSumLanes) {
      for (int64_t l = 0; l < kBlockSumLanes; ++l) part[l] += term(i + l);
    }
    for (; i < stop; ++i) part[0] += term(i);
    C block = 0;
    for (int64_t l = 0; l < kBlockSumLanes; ++l) block += part[l];
    total += static_cast<double>(block);
  }
  return total;
}

/// Sum of p[0..n).
template <typename C>
double SumOf(const C* p, int64_t n) {
  return BlockSum<C>(n, [p](int64_t i) { return p[i]; });
}

/// Sum of (p[i] - mean)^2, the deviations taken in C.
template <typename C>
double SquaredDeviations(const C* p, int64_t n, double mean) {
  const C mu = static_cast<C>(mean);
  return BlockSum<C>(n, [p, mu](int64_t i) {
    const C d = p[i] - mu;
    return d * d;
  });
}

}  // namespace memopt
