// Conv, ConvGrad and ConvTranspose on images whose column matrix takes several tiles (im2col.h:
// about 1 MiB each; the last tile partial), in float and float16, against the convolution's
// definition summed in double over the (rounded) inputs. Strided windows, so neither the direct
// convolution nor its input gradient applies.
#include <catch2/catch.hpp>
#include <cmath>
#include <string>

#include "helpers/training_test_util.h"

namespace memopt::testing {
namespace {

/// A 2-D window: square kernel k, stride s, pad p on every side, no dilation.
struct Window2 {
  int64_t in_h, in_w, k, s, p;
  int64_t OutH() const { return (in_h + 2 * p - k) / s + 1; }
  int64_t OutW() const { return (in_w + 2 * p - k) / s + 1; }
};

std::vector<double> Pattern(int64_t n, int64_t a, int64_t m) {
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = static_cast<double>((i * a) % m) / (m / 2.0) - 1.0;
  return v;
}

/// Checks |a - e| <= tol * (1 + |e|) for every element with one assertion (these tensors have up
/// to 400,000 elements), naming the first one that is not.
void ExpectNear(const Tensor& actual, const std::vector<double>& expected, double tol) {
  REQUIRE(actual.numel() == static_cast<int64_t>(expected.size()));
  int64_t bad = -1;
  for (int64_t i = 0; i < actual.numel() && bad < 0; ++i) {
    const double e = expected[static_cast<size_t>(i)];
    if (!(std::abs(actual.GetAsDouble(i) - e) <= tol * (1 + std::abs(e)))) bad = i;
  }
  INFO("first element out of tolerance: " << bad << (bad >= 0 ? ", actual " + std::to_string(actual.GetAsDouble(bad)) +
                                                                     ", expected " + std::to_string(expected[static_cast<size_t>(bad)])
                                                               : std::string()));
  CHECK(bad == -1);
}

/// Calls f(oh, ow, ih, iw, kh, kw) for every tap of the window that lands inside the image.
template <typename F>
void ForEachTap(const Window2& w, F&& f) {
  for (int64_t oh = 0; oh < w.OutH(); ++oh) {
    for (int64_t ow = 0; ow < w.OutW(); ++ow) {
      for (int64_t kh = 0; kh < w.k; ++kh) {
        for (int64_t kw = 0; kw < w.k; ++kw) {
          const int64_t ih = oh * w.s - w.p + kh, iw = ow * w.s - w.p + kw;
          if (ih >= 0 && ih < w.in_h && iw >= 0 && iw < w.in_w) f(oh, ow, ih, iw, kh, kw);
        }
      }
    }
  }
}

// One image of 64 channels, 80x80, 16 filters of 3x3, stride 2, pad 1: 1,600 output positions of
// 576 column rows (2,304 bytes each in float), 455 to a tile: 4 tiles, the last of 235.
constexpr int64_t kC = 64, kM = 16;
constexpr Window2 kWin{80, 80, 3, 2, 1};

struct ConvReference {
  std::vector<double> y, dx, dw;
};

/// Y, dX and dW of the window above, summed in double.
ConvReference Reference(const std::vector<double>& x, const std::vector<double>& w, const std::vector<double>& dy) {
  const int64_t oh = kWin.OutH(), ow = kWin.OutW(), hw = kWin.in_h * kWin.in_w;
  ConvReference r{std::vector<double>(dy.size(), 0.0), std::vector<double>(x.size(), 0.0),
                  std::vector<double>(w.size(), 0.0)};
  for (int64_t m = 0; m < kM; ++m) {
    for (int64_t c = 0; c < kC; ++c) {
      ForEachTap(kWin, [&](int64_t a, int64_t b, int64_t ih, int64_t iw, int64_t kh, int64_t kw) {
        const size_t yi = static_cast<size_t>((m * oh + a) * ow + b);
        const size_t xi = static_cast<size_t>(c * hw + ih * kWin.in_w + iw);
        const size_t wi = static_cast<size_t>(((m * kC + c) * 3 + kh) * 3 + kw);
        r.y[yi] += w[wi] * x[xi];
        r.dx[xi] += w[wi] * dy[yi];
        r.dw[wi] += dy[yi] * x[xi];
      });
    }
  }
  return r;
}

TEST_CASE("Conv and ConvGrad by column tiles equal the definition", "[conv][kernels]") {
  const int64_t oh = kWin.OutH(), ow = kWin.OutW();
  for (DataType dtype : {DataType::kFloat, DataType::kFloat16}) {
    INFO(DataTypeName(dtype));
    const Tensor x = MakeTensor(dtype, {1, kC, 80, 80}, Pattern(kC * 80 * 80, 37, 19));
    const Tensor w = MakeTensor(dtype, {kM, kC, 3, 3}, Pattern(kM * kC * 9, 53, 23));
    const Tensor dy = MakeTensor(dtype, {1, kM, oh, ow}, Pattern(kM * oh * ow, 41, 17));
    // The reference sums the (rounded) inputs exactly: the tolerance is float accumulation, and
    // for float16 one rounding of each result (2^-11 relative).
    const ConvReference want = Reference(Values(x), Values(w), Values(dy));
    const double tol = dtype == DataType::kFloat ? 1e-4 : 1e-3;
    KernelCall conv("", "Conv");
    conv.Input(x).Input(w).Ints("strides", {2, 2}).Ints("pads", {1, 1, 1, 1}).Ints("kernel_shape", {3, 3});
    ExpectNear(MustRun(conv)[0], want.y, tol);
    KernelCall grad("com.microsoft", "ConvGrad", 3);
    grad.Input(dy).Input(x).Input(w).Ints("strides", {2, 2}).Ints("pads", {1, 1, 1, 1}).Ints("kernel_shape", {3, 3});
    const std::vector<Tensor> out = MustRun(grad);
    ExpectNear(out[0], want.dx, tol);
    ExpectNear(out[1], want.dw, tol);
  }
}

TEST_CASE("Conv by column tiles over two images: eight products, one BLAS call each", "[conv][kernels]") {
  // One image's 4 tiles are fewer than kMinParallelProducts (its products are cut on the threads,
  // above); two images' 8 take one BLAS call each, in parallel.
  const int64_t oh = kWin.OutH(), ow = kWin.OutW(), image = kC * 80 * 80;
  const std::vector<double> x0 = Pattern(image, 37, 19), x1 = Pattern(image, 43, 23);
  std::vector<double> x = x0;
  x.insert(x.end(), x1.begin(), x1.end());
  const std::vector<double> w = Pattern(kM * kC * 9, 53, 23), dy(static_cast<size_t>(kM * oh * ow), 0.0);
  std::vector<double> want = Reference(x0, w, dy).y;
  const std::vector<double> second = Reference(x1, w, dy).y;
  want.insert(want.end(), second.begin(), second.end());
  KernelCall conv("", "Conv");
  conv.Input(F32({2, kC, 80, 80}, x)).Input(F32({kM, kC, 3, 3}, w));
  conv.Ints("strides", {2, 2}).Ints("pads", {1, 1, 1, 1}).Ints("kernel_shape", {3, 3});
  ExpectNear(MustRun(conv)[0], want, 1e-4);
}

TEST_CASE("ConvTranspose by column tiles and channel blocks equals the definition", "[conv][kernels]") {
  // X [1, 16, 64, 64], W [16, 16, 3, 3], stride 2, pad 1: Y is [1, 16, 127, 127]. Blocks of 8
  // output channels (72 column rows, 3,640 of X's pixels to a 1 MiB tile): 2 blocks of 2 tiles.
  const int64_t ci = 16, ih = 64, iw = 64, mo = 16, oh = 127;
  const Window2 back{oh, oh, 3, 2, 1};  // Y's window: Conv of Y gives X's 64x64
  REQUIRE(back.OutH() == ih);
  for (DataType dtype : {DataType::kFloat, DataType::kFloat16}) {
    INFO(DataTypeName(dtype));
    const Tensor x = MakeTensor(dtype, {1, ci, ih, iw}, Pattern(ci * ih * iw, 29, 13));
    const Tensor w = MakeTensor(dtype, {ci, mo, 3, 3}, Pattern(ci * mo * 9, 31, 11));
    const std::vector<double> xv = Values(x), wv = Values(w);
    std::vector<double> y(static_cast<size_t>(mo * oh * oh), 0.0);
    for (int64_t c = 0; c < ci; ++c) {
      for (int64_t m = 0; m < mo; ++m) {
        ForEachTap(back, [&](int64_t a, int64_t b, int64_t yh, int64_t yw, int64_t kh, int64_t kw) {
          y[static_cast<size_t>((m * oh + yh) * oh + yw)] +=
              xv[static_cast<size_t>((c * ih + a) * iw + b)] * wv[static_cast<size_t>(((c * mo + m) * 3 + kh) * 3 + kw)];
        });
      }
    }
    KernelCall ct("", "ConvTranspose");
    ct.Input(x).Input(w).Ints("strides", {2, 2}).Ints("pads", {1, 1, 1, 1}).Ints("kernel_shape", {3, 3});
    const Tensor out = MustRun(ct)[0];
    REQUIRE(out.shape() == std::vector<int64_t>{1, mo, oh, oh});
    const double tol = dtype == DataType::kFloat ? 1e-4 : 1e-3;
    ExpectNear(out, y, tol);
  }
}

TEST_CASE("ConvGrad's dX and ConvTranspose through a 1x1 window with groups", "[conv][kernels]") {
  // X [2, 4, 3, 5], W [6, 2, 1, 1], group 2: dX[b, g*2 + c, p] = sum over m in group g of
  // W[g*3 + m, c] dY[b, g*3 + m, p]; ConvTranspose of dY with the same W is the same sum.
  const int64_t n = 2, c = 4, m = 6, hw = 15;
  for (DataType dtype : {DataType::kFloat, DataType::kFloat16}) {
    INFO(DataTypeName(dtype));
    const Tensor x = MakeTensor(dtype, {n, c, 3, 5}, Pattern(n * c * hw, 7, 5));
    const Tensor w = MakeTensor(dtype, {m, c / 2, 1, 1}, Pattern(m * c / 2, 5, 7));
    const Tensor dy = MakeTensor(dtype, {n, m, 3, 5}, Pattern(n * m * hw, 11, 13));
    const std::vector<double> wv = Values(w), dyv = Values(dy);
    std::vector<double> dx(static_cast<size_t>(n * c * hw), 0.0);
    for (int64_t b = 0; b < n; ++b) {
      for (int64_t ci = 0; ci < c; ++ci) {
        const int64_t g = ci / 2;
        for (int64_t mi = g * 3; mi < g * 3 + 3; ++mi) {
          for (int64_t p = 0; p < hw; ++p) {
            dx[static_cast<size_t>((b * c + ci) * hw + p)] +=
                wv[static_cast<size_t>(mi * 2 + ci % 2)] * dyv[static_cast<size_t>((b * m + mi) * hw + p)];
          }
        }
      }
    }
    const double tol = dtype == DataType::kFloat ? 1e-5 : 1e-3;
    KernelCall grad("com.microsoft", "ConvGrad", 3);
    grad.Input(dy).Input(x).Input(w).Int("group", 2).Ints("kernel_shape", {1, 1});
    ExpectNear(MustRun(grad)[0], dx, tol);
    KernelCall ct("", "ConvTranspose");
    ct.Input(dy).Input(w).Int("group", 2).Ints("kernel_shape", {1, 1});
    ExpectNear(MustRun(ct)[0], dx, tol);
  }
}

}  // namespace
}  // namespace memopt::testing
