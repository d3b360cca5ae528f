// GemmNT against the product's definition summed in double, over shapes that exercise its
// edges: rows and columns that are not whole 4x4 tiles, k with a partial last vector, blocks of
// rows and columns (a long k shrinks them), a bias row, accumulation into y, alpha and beta,
// strided operands; and the same bits on one thread and two.
#include "exec/kernels/gemm_nt.h"

#include <cmath>
#include <vector>

#include <catch2/catch.hpp>

#include "exec/kernels/kernel_util.h"
#include "test_skip.h"

namespace memopt::math {
namespace {

struct NtCase {
  int64_t m, n, k, pad;  ///< pad: extra elements at the end of each row of a, b and y
  float alpha, beta;
  bool bias, accumulate;
};

std::vector<float> Ramp(int64_t n, int64_t mul, int64_t mod) {
  std::vector<float> v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>((i * mul) % mod) / (mod / 2) - 1.0f;
  return v;
}

TEST_CASE("GemmNT equals the product's definition", "[exec][kernels][gemm]") {
  if (!GemmNTApplies(kGemmNTMinK)) {  // Gemm keeps BLAS: there is no GemmNT path to compare
    testing::MarkSkipped("this CPU has no AVX-512F, so Gemm never takes the GemmNT path");
    return;
  }
  REQUIRE_FALSE(GemmNTApplies(kGemmNTMinK - 1));
  const std::vector<NtCase> cases = {
      {128, 1024, 784, 0, 1.0f, 1.0f, true, false},  // the MLP's first layer
      {128, 10, 1024, 0, 1.0f, 1.0f, true, false},   // its second: a column block of 10
      {7, 9, 130, 3, 0.5f, 2.0f, true, false},       // edge tiles both ways, k tail of 2, strides
      {5, 6, 129, 0, 1.0f, 0.25f, false, true},      // accumulate into y
      {3, 70, 4100, 1, -1.0f, 1.0f, false, false},   // long k: column blocks of 28
      {1, 1, 128, 0, 1.0f, 1.0f, true, true},        // one output, bias and accumulation
  };
  const int before = NumThreads();
  for (const NtCase& t : cases) {
    INFO("m " << t.m << " n " << t.n << " k " << t.k << " pad " << t.pad << " bias " << t.bias << " accumulate "
              << t.accumulate);
    const int64_t lda = t.k + t.pad, ldy = t.n + t.pad;
    const std::vector<float> a = Ramp(t.m * lda, 37, 101), b = Ramp(t.n * lda, 53, 89), bias = Ramp(t.n, 7, 13);
    const std::vector<float> y0 = Ramp(t.m * ldy, 11, 17);
    std::vector<float> y[2] = {y0, y0};
    for (int threads = 1; threads <= 2; ++threads) {
      SetNumThreads(threads);
      GemmNT(t.m, t.n, t.k, t.alpha, a.data(), lda, b.data(), lda, t.bias ? bias.data() : nullptr, t.beta,
             t.accumulate, y[threads - 1].data(), ldy);
    }
    SetNumThreads(before);
    for (int64_t i = 0; i < t.m; ++i) {
      for (int64_t j = 0; j < ldy; ++j) {
        const auto at = static_cast<size_t>(i * ldy + j);
        INFO("y[" << i << "][" << j << "] = " << y[0][at]);
        if (j >= t.n) {  // the row's padding is left alone
          CHECK(y[0][at] == y0[at]);
          continue;
        }
        double want = 0, scale = 0;
        for (int64_t kk = 0; kk < t.k; ++kk) {
          const double term = double(a[static_cast<size_t>(i * lda + kk)]) * b[static_cast<size_t>(j * lda + kk)];
          want += term;
          scale += std::abs(term);
        }
        want *= t.alpha;
        scale *= std::abs(t.alpha);
        if (t.bias) want += double(t.beta) * bias[static_cast<size_t>(j)];
        if (t.accumulate) want += double(t.beta) * y0[at];
        CHECK(std::abs(y[0][at] - want) <= 1e-6 * scale + 1e-6 * std::abs(want) + 1e-6);
        CHECK(y[1][at] == y[0][at]);  // two threads: the same bits
      }
    }
  }
}

}  // namespace
}  // namespace memopt::math
