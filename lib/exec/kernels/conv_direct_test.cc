// DirectConv2D against the definition of a convolution, summed in double, over geometries that
// exercise its edges: output widths that are not a multiple of the vector, channel counts that
// are not a multiple of the register tile, groups, bias, pads on either side (also past the
// window's reach), 1-D and 1xK windows, one image and several; DirectConvInputGrad against the
// adjoint over the same geometries.
#include "exec/kernels/conv_direct.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

namespace memopt::math {
namespace {

struct DirectCase {
  int64_t images, channels, out_channels, group, in_h, in_w, kh, kw, pt, pl, pb, pr;
  bool bias;
};

std::vector<DirectCase> Cases() {
  return {
      {16, 32, 32, 1, 16, 16, 3, 3, 1, 1, 1, 1, false},  // the ConvNet block
      {4, 3, 32, 1, 32, 32, 3, 3, 1, 1, 1, 1, true},     // its stem, with bias
      {1, 5, 7, 1, 9, 13, 3, 3, 1, 1, 1, 1, true},       // one image: blocks in parallel; tails
      {2, 4, 6, 2, 7, 20, 3, 5, 0, 2, 2, 1, true},       // groups, uneven pads
      {3, 6, 9, 3, 5, 5, 2, 2, 0, 0, 0, 0, false},       // valid 2x2, grouped
      {2, 2, 3, 1, 6, 6, 3, 3, 3, 4, 2, 4, true},        // pads past the window's reach
      {2, 3, 4, 1, 1, 40, 1, 5, 0, 2, 0, 2, true},       // 1x5 over a 1-row image (the 1-D case)
      {1, 1, 1, 1, 4, 3, 4, 3, 0, 0, 0, 0, false},       // the window is the whole image
  };
}

/// Inputs of a case: x [images, channels, h, w] or dy, the weights, the bias, in [-1, 1].
std::vector<float> Ramp(int64_t n, int64_t mul, int64_t mod) {
  std::vector<float> v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>((i * mul) % mod) / (mod / 2) - 1.0f;
  return v;
}

TEST_CASE("DirectConv2D equals the convolution's definition", "[exec][kernels][conv]") {
  const std::vector<DirectCase> cases = Cases();
  const bool prefer_avx2 = GENERATE(false, true);  // the AVX2 tiles too where AVX-512 is present
  DirectConvPreferAvx2ForTesting(prefer_avx2);
  for (const DirectCase& t : cases) {
    INFO("AVX2 preferred " << prefer_avx2 << ", images " << t.images << " channels " << t.channels << " -> "
                           << t.out_channels << " group " << t.group << " image " << t.in_h << "x" << t.in_w
                           << " window " << t.kh << "x" << t.kw);
    const int64_t out_h = t.in_h + t.pt + t.pb - t.kh + 1, out_w = t.in_w + t.pl + t.pr - t.kw + 1;
    const int64_t cg = t.channels / t.group, mg = t.out_channels / t.group;
    const Window3 w = MakeWindow3({t.in_h, t.in_w}, {out_h, out_w}, {t.kh, t.kw}, {1, 1}, {1, 1}, {t.pt, t.pl});
#if defined(__x86_64__)
    REQUIRE(DirectConvApplies(w) == (__builtin_cpu_supports("avx512f") ||
                                     (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))));
#endif
    if (!DirectConvApplies(w)) break;  // this CPU keeps im2col + BLAS; nothing to compare
    const std::vector<float> x = Ramp(t.images * t.channels * t.in_h * t.in_w, 37, 101);
    const std::vector<float> wt = Ramp(t.out_channels * cg * t.kh * t.kw, 53, 89);
    std::vector<float> b(static_cast<size_t>(t.out_channels));
    for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(i) * 0.5f - 1.0f;
    std::vector<float> y(static_cast<size_t>(t.images * t.out_channels * out_h * out_w), std::nanf(""));
    DirectConv2D(x.data(), wt.data(), t.bias ? b.data() : nullptr, t.images, t.channels, t.out_channels, t.group, w,
                 y.data());
    for (int64_t n = 0; n < t.images; ++n) {
      for (int64_t oc = 0; oc < t.out_channels; ++oc) {
        const int64_t g = oc / mg;
        for (int64_t oh = 0; oh < out_h; ++oh) {
          for (int64_t ow = 0; ow < out_w; ++ow) {
            double want = t.bias ? b[static_cast<size_t>(oc)] : 0.0, scale = std::abs(want);
            for (int64_t ci = 0; ci < cg; ++ci) {
              for (int64_t i = 0; i < t.kh; ++i) {
                for (int64_t j = 0; j < t.kw; ++j) {
                  const int64_t ih = oh - t.pt + i, iw = ow - t.pl + j;
                  if (ih < 0 || ih >= t.in_h || iw < 0 || iw >= t.in_w) continue;
                  const double term =
                      double(x[static_cast<size_t>(((n * t.channels + g * cg + ci) * t.in_h + ih) * t.in_w + iw)]) *
                      double(wt[static_cast<size_t>(((oc * cg + ci) * t.kh + i) * t.kw + j)]);
                  want += term;
                  scale += std::abs(term);
                }
              }
            }
            const float got = y[static_cast<size_t>(((n * t.out_channels + oc) * out_h + oh) * out_w + ow)];
            INFO("y[" << n << "][" << oc << "][" << oh << "][" << ow << "] = " << got << ", expected " << want);
            CHECK(std::abs(got - want) <= 1e-6 * scale + 1e-6);
          }
        }
      }
    }
  }
  DirectConvPreferAvx2ForTesting(false);
}

TEST_CASE("DirectConvInputGrad equals the adjoint of the convolution", "[exec][kernels][conv]") {
  const bool prefer_avx2 = GENERATE(false, true);
  DirectConvPreferAvx2ForTesting(prefer_avx2);
  for (const DirectCase& t : Cases()) {
    INFO("AVX2 preferred " << prefer_avx2 << ", images " << t.images << " channels " << t.channels << " -> "
                           << t.out_channels << " group " << t.group << " image " << t.in_h << "x" << t.in_w
                           << " window " << t.kh << "x" << t.kw << " pads " << t.pt << "," << t.pl);
    const int64_t out_h = t.in_h + t.pt + t.pb - t.kh + 1, out_w = t.in_w + t.pl + t.pr - t.kw + 1;
    const int64_t cg = t.channels / t.group, mg = t.out_channels / t.group;
    const Window3 w = MakeWindow3({t.in_h, t.in_w}, {out_h, out_w}, {t.kh, t.kw}, {1, 1}, {1, 1}, {t.pt, t.pl});
    const bool reach = t.pt <= t.kh - 1 && t.pl <= t.kw - 1;  // dY padded by kernel - 1 - pad >= 0
    REQUIRE(DirectConvInputGradWindow(w).has_value() == (DirectConvApplies(w) && reach));
    if (!DirectConvInputGradWindow(w)) continue;
    const std::vector<float> dy = Ramp(t.images * t.out_channels * out_h * out_w, 41, 97);
    const std::vector<float> wt = Ramp(t.out_channels * cg * t.kh * t.kw, 53, 89);
    std::vector<float> dx(static_cast<size_t>(t.images * t.channels * t.in_h * t.in_w), std::nanf(""));
    DirectConvInputGrad(dy.data(), wt.data(), t.images, t.channels, t.out_channels, t.group, w, dx.data());
    // The adjoint: every (output, tap) pair of the forward adds dy * w into the input it read.
    std::vector<double> want(dx.size(), 0.0), scale(dx.size(), 0.0);
    for (int64_t n = 0; n < t.images; ++n) {
      for (int64_t oc = 0; oc < t.out_channels; ++oc) {
        const int64_t g = oc / mg;
        for (int64_t oh = 0; oh < out_h; ++oh) {
          for (int64_t ow = 0; ow < out_w; ++ow) {
            const double d = dy[static_cast<size_t>(((n * t.out_channels + oc) * out_h + oh) * out_w + ow)];
            for (int64_t ci = 0; ci < cg; ++ci) {
              for (int64_t i = 0; i < t.kh; ++i) {
                for (int64_t j = 0; j < t.kw; ++j) {
                  const int64_t ih = oh - t.pt + i, iw = ow - t.pl + j;
                  if (ih < 0 || ih >= t.in_h || iw < 0 || iw >= t.in_w) continue;
                  const auto at = static_cast<size_t>(((n * t.channels + g * cg + ci) * t.in_h + ih) * t.in_w + iw);
                  const double term = d * wt[static_cast<size_t>(((oc * cg + ci) * t.kh + i) * t.kw + j)];
                  want[at] += term;
                  scale[at] += std::abs(term);
                }
              }
            }
          }
        }
      }
    }
    for (size_t i = 0; i < dx.size(); ++i) {
      INFO("dx[" << i << "] = " << dx[i] << ", expected " << want[i]);
      CHECK(std::abs(dx[i] - want[i]) <= 1e-6 * scale[i] + 1e-6);
    }
  }
  DirectConvPreferAvx2ForTesting(false);
}

}  // namespace
}  // namespace memopt::math
