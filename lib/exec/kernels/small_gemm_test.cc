// SmallGemm against the product's definition summed in double, over shapes around its tiles
// (rows of 8, 6, 4, 2 and 1; column chunks of 64, 48, 32 and 16 with a padded tail), every
// transpose, strided operands and an output stride whose padding must stay untouched.
#include "exec/kernels/small_gemm.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <tuple>
#include <vector>

#include "test_skip.h"

namespace memopt::math {
namespace {

/// y = alpha op(a) op(b) in double, k in order.
std::vector<double> Reference(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const std::vector<float>& a,
                              int64_t lda, const std::vector<float>& b, int64_t ldb) {
  std::vector<double> y(static_cast<size_t>(m * n), 0.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t kk = 0; kk < k; ++kk) s += double(ta ? a[kk * lda + i] : a[i * lda + kk]) * double(tb ? b[j * ldb + kk] : b[kk * ldb + j]);
      y[i * n + j] = alpha * s;
    }
  return y;
}

TEST_CASE("small gemm: every transpose, tail rows and columns, against a double reference", "[exec][small_gemm]") {
  if (!SmallGemmApplies(4, 4, 4)) {  // MatMul keeps BLAS: there is no SmallGemm path to compare
    testing::MarkSkipped("this CPU has neither AVX-512F nor AVX2 with FMA, so MatMul never takes SmallGemm");
    return;
  }
  // Sizes around the tiles: rows 1, 2, 4, 6, 8 and their tails; columns across 16/32/48/64 chunks.
  for (const auto& [m, n, k] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{
           {1, 1, 1}, {3, 5, 7}, {8, 16, 64}, {9, 17, 3}, {64, 64, 16}, {13, 100, 5}, {6, 33, 20}, {7, 70, 9}}) {
    for (bool ta : {false, true}) {
      for (bool tb : {false, true}) {
        INFO(m << "x" << n << "x" << k << " ta " << ta << " tb " << tb);
        const int64_t lda = (ta ? m : k) + 3, ldb = (tb ? k : n) + 2, ldy = n + 1;  // padded strides
        std::vector<float> a(static_cast<size_t>((ta ? k : m) * lda)), b(static_cast<size_t>((tb ? n : k) * ldb));
        for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>((i * 37 % 101) - 50) / 32.0f;
        for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>((i * 53 % 97) - 48) / 16.0f;
        std::vector<float> y(static_cast<size_t>(m * ldy), -7.0f);
        SmallGemm(ta, tb, m, n, k, 0.5f, a.data(), lda, b.data(), ldb, y.data(), ldy);
        const std::vector<double> ref = Reference(ta, tb, m, n, k, 0.5f, a, lda, b, ldb);
        for (int64_t i = 0; i < m; ++i) {
          for (int64_t j = 0; j < n; ++j) CHECK(std::fabs(y[i * ldy + j] - ref[i * n + j]) <= 1e-4 * (1 + std::fabs(ref[i * n + j])));
          CHECK(y[i * ldy + n] == -7.0f);  // the stride's padding untouched
        }
      }
    }
  }
}

TEST_CASE("small gemm: applies to small products only", "[exec][small_gemm]") {
  if (!SmallGemmApplies(4, 4, 4)) {
    testing::MarkSkipped("this CPU has neither AVX-512F nor AVX2 with FMA");
    return;
  }
  CHECK(SmallGemmApplies(64, 64, 64));
  CHECK_FALSE(SmallGemmApplies(128, 128, 128));
  CHECK_FALSE(SmallGemmApplies(0, 4, 4));
}

}  // namespace
}  // namespace memopt::math

namespace memopt::math {
namespace {

TEST_CASE("small gemm on a panel: columns from an offset, with the reads past the last row", "[exec][small_gemm]") {
  if (!SmallGemmPanelApplies()) {
    testing::MarkSkipped("this CPU has neither AVX-512F nor AVX2 with FMA: the recurrent steps use BLAS");
    return;
  }
  // A [k, ld] panel of rows padded to 16 plus one vector of slack, as the recurrent engine lays R
  // out; products over column ranges [j0, j0 + n) as its threads and its GRU candidate block
  // read them (j0 = 2H reads up to 15 floats past the last row's columns).
  for (const auto& [m, cols, k, j0, n] : std::vector<std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t>>{
           {8, 48, 16, 32, 16}, {3, 30, 5, 20, 10}, {64, 1024, 7, 0, 1024}, {5, 200, 9, 64, 64}, {1, 3, 2, 2, 1}}) {
    INFO(m << " rows, panel " << k << " x " << cols << ", columns " << j0 << " + " << n);
    const int64_t ld = (cols + kSmallGemmPad - 1) / kSmallGemmPad * kSmallGemmPad;
    std::vector<float> panel(static_cast<size_t>(k * ld + kSmallGemmPad), 0.0f), a(static_cast<size_t>(m * k));
    std::vector<float> b(static_cast<size_t>(k * n));
    for (int64_t kk = 0; kk < k; ++kk)
      for (int64_t j = 0; j < cols; ++j) panel[kk * ld + j] = static_cast<float>(((kk * 7 + j * 3) % 11) - 5) / 4.0f;
    for (int64_t kk = 0; kk < k; ++kk)
      for (int64_t j = 0; j < n; ++j) b[kk * n + j] = panel[kk * ld + j0 + j];
    for (int64_t i = 0; i < m * k; ++i) a[i] = static_cast<float>((i * 5) % 9 - 4) / 3.0f;
    const int64_t ldy = n + 3;
    std::vector<float> y(static_cast<size_t>(m * ldy), -7.0f);
    SmallGemmOnPanel(false, m, n, k, 1.0f, a.data(), k, panel.data() + j0, ld, y.data(), ldy);
    const std::vector<double> want = Reference(false, false, m, n, k, 1.0f, a, k, b, n);
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) REQUIRE(std::abs(y[i * ldy + j] - want[i * n + j]) <= 1e-4 * (1 + std::abs(want[i * n + j])));
      for (int64_t j = n; j < ldy; ++j) REQUIRE(y[i * ldy + j] == -7.0f);  // the stride's padding untouched
    }
  }
}

}  // namespace
}  // namespace memopt::math
