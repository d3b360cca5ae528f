#include "exec/math/vector_math.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <vector>

namespace memopt::math {
namespace {

/// Distance in units in the last place between two finite floats of the same sign.
double Ulps(float got, double want) {
  const float w = static_cast<float>(want);
  if (got == w) return 0;
  const double ulp = std::nextafter(std::fabs(w), std::numeric_limits<float>::infinity()) - std::fabs(w);
  return std::fabs(static_cast<double>(got) - want) / ulp;
}

/// Every 37th float bit pattern in [lo, hi] (about 200k points per range), plus the ends.
std::vector<float> Sweep(float lo, float hi, int count = 200000) {
  std::vector<float> v;
  for (int i = 0; i <= count; ++i) v.push_back(lo + (hi - lo) * static_cast<float>(i) / static_cast<float>(count));
  return v;
}

double NormCdf(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

TEST_CASE("ExpF is within 2 ulp of exp over the normal range, and its ends are right", "[vector_math]") {
  double worst = 0;
  for (float x : Sweep(-87.0f, 88.7f)) worst = std::max(worst, Ulps(ExpF(x), std::exp(static_cast<double>(x))));
  CHECK(worst <= 2.0);
  CHECK(ExpF(0.0f) == 1.0f);
  CHECK(ExpF(-1e4f) == 0.0f);  // the masked attention scores
  CHECK(ExpF(-200.0f) == 0.0f);
  CHECK(std::isinf(ExpF(89.0f)));
  CHECK(std::isnan(ExpF(std::nanf(""))));
  CHECK(ExpF(-std::numeric_limits<float>::infinity()) == 0.0f);
  CHECK(std::isinf(ExpF(std::numeric_limits<float>::infinity())));
  // Subnormal results: close in absolute terms.
  CHECK(std::fabs(ExpF(-100.0f) - std::exp(-100.0)) < 1e-44);
}

TEST_CASE("ErfF and TanhF are within 4 ulp (or 1e-7 relative) of double libm", "[vector_math]") {
  double worst_erf = 0, worst_tanh = 0;
  for (float x : Sweep(-6.0f, 6.0f)) {
    const double e = std::erf(static_cast<double>(x));
    const double t = std::tanh(static_cast<double>(x));
    worst_erf = std::max(worst_erf, std::min(Ulps(ErfF(x), e), std::fabs(ErfF(x) - e) / std::fabs(e) / 1.19e-8));
    worst_tanh = std::max(worst_tanh, Ulps(TanhF(x), t));
  }
  CHECK(worst_erf <= 4.0);
  CHECK(worst_tanh <= 4.0);
  for (float x : {1e-30f, 1e-8f, -3e-5f}) {
    CHECK(ErfF(x) == Approx(std::erf(static_cast<double>(x))).epsilon(1e-7));
    CHECK(TanhF(x) == Approx(std::tanh(static_cast<double>(x))).epsilon(1e-7));
  }
  CHECK(ErfF(10.0f) == 1.0f);
  CHECK(ErfF(-1e10f) == -1.0f);
  CHECK(TanhF(50.0f) == 1.0f);
  CHECK(TanhF(-1e30f) == -1.0f);
  CHECK(std::isnan(ErfF(std::nanf(""))));
  CHECK(std::isnan(TanhF(std::nanf(""))));
}

TEST_CASE("NormCdfF keeps its relative accuracy in the lower tail", "[vector_math]") {
  double worst = 0;
  for (float x : Sweep(-13.0f, 6.0f)) {
    const double want = NormCdf(static_cast<double>(x));
    const double bound = 2e-6 + 1e-7 * static_cast<double>(x) * x;
    worst = std::max(worst, std::fabs(NormCdfF(x) - want) / want / bound);
  }
  CHECK(worst <= 1.0);
}

TEST_CASE("the array forms agree with the scalar forms element by element", "[vector_math]") {
  std::vector<float> x = Sweep(-12.0f, 12.0f, 4099), bias = {0.25f, -0.5f, 1.0f};
  std::vector<float> dy(x.size()), y(x.size()), g(x.size());
  for (size_t i = 0; i < x.size(); ++i) dy[i] = 0.5f + static_cast<float>(i % 7) * 0.25f;
  const int64_t n = static_cast<int64_t>(x.size());
  ExpArray(x.data(), y.data(), n);
  for (size_t i = 0; i < x.size(); ++i) REQUIRE(y[i] == ExpF(x[i]));
  ErfArray(x.data(), y.data(), n);
  for (size_t i = 0; i < x.size(); ++i) REQUIRE(y[i] == ErfF(x[i]));
  TanhArray(x.data(), y.data(), n);
  for (size_t i = 0; i < x.size(); ++i) REQUIRE(y[i] == TanhF(x[i]));
  std::vector<float> row_bias(x.size());
  for (size_t i = 0; i < x.size(); ++i) row_bias[i] = bias[i % 3];
  GeluArray(x.data(), row_bias.data(), y.data(), n);
  GeluGradArray(dy.data(), x.data(), row_bias.data(), g.data(), n);
  for (size_t i = 0; i < x.size(); ++i) {
    const double v = static_cast<double>(x[i] + bias[i % 3]);
    const double pdf = std::exp(-0.5 * v * v) / std::sqrt(2 * M_PI);
    const double eps = 4e-6 + 2e-7 * v * v;
    REQUIRE(y[i] == Approx(v * NormCdf(v)).epsilon(eps).margin(1e-37));
    // Phi(v) + v phi(v) cancels near Gelu's minimum (v ~ -0.75): the bound is on the terms' size.
    const double scale = dy[i] * (NormCdf(v) + std::fabs(v) * pdf);
    REQUIRE(g[i] == Approx(dy[i] * (NormCdf(v) + v * pdf)).epsilon(0).margin(eps * scale + 1e-37));
  }
}

TEST_CASE("vector math: row maxima, dot products in double and scaling (by hand)", "[vector_math]") {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  // 37 values (two 16-lane blocks and a tail of 5), the largest in the tail, then in a block.
  std::vector<float> x(37);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 7) - 3.0f;  // -3 .. 3
  x[35] = 9.5f;
  CHECK(RowMax(x.data(), nullptr, 37) == 9.5f);
  x[35] = 0.0f;
  x[4] = 8.0f;
  CHECK(RowMax(x.data(), nullptr, 37) == 8.0f);
  // With a bias: x + b, the maximum moves to where the bias lifts it.
  std::vector<float> b(37, 0.0f);
  b[20] = 10.0f;  // x[20] = 20 % 7 - 3 = 3: 13
  CHECK(RowMax(x.data(), b.data(), 37) == 13.0f);
  // NaN never wins; -inf only (or nothing) gives -inf.
  x[7] = nan;
  CHECK(RowMax(x.data(), nullptr, 37) == 8.0f);
  std::vector<float> low(20, -inf);
  low[3] = nan;
  CHECK(RowMax(low.data(), nullptr, 20) == -inf);
  CHECK(RowMax(low.data(), nullptr, 0) == -inf);
  // 1 * 1 + 2 * 2 + ... + 19 * 19 = 19 * 20 * 39 / 6 = 2470; a product that float would round.
  std::vector<float> a(19), c(19);
  for (int i = 0; i < 19; ++i) a[i] = c[i] = static_cast<float>(i + 1);
  CHECK(DotInDouble(a.data(), c.data(), 19) == 2470.0);
  const float big = 16777217.0f;  // rounds to 2^24 in float; the double product of 2^24 and 3 is exact
  CHECK(DotInDouble(&big, &c[2], 1) == 3.0 * 16777216.0);
  // Softmax rows (by hand): a row of 20 equal values and one of 0 and ln 3 in 19 -inf; log form.
  std::vector<float> rows(40, 2.5f), out(40);
  for (int i = 20; i < 40; ++i) rows[i] = -inf;
  rows[22] = 0.0f;
  rows[37] = std::log(3.0f);
  SoftmaxRows(rows.data(), out.data(), 2, 20, false);
  for (int i = 0; i < 20; ++i) CHECK(out[i] == Approx(0.05).epsilon(1e-6));
  CHECK(out[22] == Approx(0.25).epsilon(1e-6));
  CHECK(out[37] == Approx(0.75).epsilon(1e-6));
  CHECK(out[21] == 0.0f);
  SoftmaxRows(rows.data(), out.data(), 2, 20, true);
  CHECK(out[0] == Approx(std::log(0.05)).epsilon(1e-6));
  CHECK(out[37] == Approx(std::log(0.75)).epsilon(1e-6));
  ScaleArray(a.data(), 0.5f, 19);
  for (int i = 0; i < 19; ++i) CHECK(a[i] == 0.5f * static_cast<float>(i + 1));
}

}  // namespace
}  // namespace memopt::math
