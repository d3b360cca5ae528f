// Im2Col against its definition (im2col.h) element by element, and Col2Im as its adjoint, over
// a grid of 1-D to 3-D windows: strides, dilations, pads (also larger than the kernel reach),
// "same" rows that take the shifted-copy path and rows that do not.
#include "exec/kernels/im2col.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

namespace memopt::math {
namespace {

struct Case {
  std::vector<int64_t> in, kernel, stride, dilation, pad_begin, pad_end;
};

std::vector<int64_t> OutDims(const Case& c) {
  std::vector<int64_t> out;
  for (size_t i = 0; i < c.in.size(); ++i) {
    const int64_t reach = (c.kernel[i] - 1) * c.dilation[i] + 1;
    out.push_back((c.in[i] + c.pad_begin[i] + c.pad_end[i] - reach) / c.stride[i] + 1);
  }
  return out;
}

Window3 WindowOf(const Case& c) {
  return MakeWindow3(c.in, OutDims(c), c.kernel, c.stride, c.dilation, c.pad_begin);
}

/// `channels` image planes of w with no zeros: 1 + (i % mod) * step.
std::vector<float> Image(int64_t channels, const Window3& w, size_t mod, float step) {
  std::vector<float> x(static_cast<size_t>(channels * w.InSize()));
  for (size_t i = 0; i < x.size(); ++i) x[i] = 1.0f + static_cast<float>(i % mod) * step;
  return x;
}

float Expected(const std::vector<float>& x, const Window3& w, int64_t row, int64_t o) {
  const int64_t ksize = w.KernelSize();
  const int64_t c = row / ksize, kr = row % ksize;
  const int64_t kw = kr % w.kernel[2], kh = (kr / w.kernel[2]) % w.kernel[1], kd = kr / (w.kernel[2] * w.kernel[1]);
  const int64_t ow = o % w.out[2], oh = (o / w.out[2]) % w.out[1], od = o / (w.out[2] * w.out[1]);
  const int64_t id = od * w.stride[0] - w.pad[0] + kd * w.dilation[0];
  const int64_t ih = oh * w.stride[1] - w.pad[1] + kh * w.dilation[1];
  const int64_t iw = ow * w.stride[2] - w.pad[2] + kw * w.dilation[2];
  if (id < 0 || id >= w.in[0] || ih < 0 || ih >= w.in[1] || iw < 0 || iw >= w.in[2]) return 0.0f;
  return x[static_cast<size_t>(c * w.InSize() + (id * w.in[1] + ih) * w.in[2] + iw)];
}

std::vector<Case> Cases() {
  return {
      {{7, 7}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}},   // same 3x3: the shifted copy
      {{6, 9}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}},   // same, not square
      {{8, 8}, {5, 5}, {1, 1}, {1, 1}, {2, 2}, {2, 2}},   // same 5x5
      {{8, 8}, {3, 3}, {1, 1}, {2, 2}, {2, 2}, {2, 2}},   // same, dilated
      {{7, 7}, {3, 3}, {2, 1}, {1, 1}, {1, 1}, {1, 1}},   // same width, strided rows
      {{8, 8}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}},   // strided
      {{5, 6}, {3, 3}, {1, 1}, {1, 1}, {0, 0}, {0, 0}},   // valid
      {{4, 4}, {3, 3}, {1, 1}, {1, 1}, {4, 3}, {4, 3}},   // pads past the kernel reach
      {{3, 5}, {2, 4}, {1, 1}, {1, 2}, {0, 3}, {1, 3}},   // uneven pads, width kept
      {{9}, {3}, {1}, {1}, {1}, {1}},                     // 1-D same
      {{9}, {2}, {3}, {2}, {2}, {0}},                     // 1-D strided, dilated
      {{4, 5, 5}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}},  // 3-D same
      {{5, 4, 6}, {2, 3, 3}, {2, 1, 2}, {1, 2, 1}, {1, 2, 0}, {0, 2, 1}},  // 3-D mixed
  };
}

TEST_CASE("Im2Col writes every element as its definition says; Col2Im is its adjoint", "[exec][im2col]") {
  const int64_t channels = 3;
  for (const Case& c : Cases()) {
    const Window3 w = WindowOf(c);
    const int64_t rows = channels * w.KernelSize(), cols = w.OutSize();
    const std::vector<float> x = Image(channels, w, 97, 0.25f);
    std::vector<float> col(static_cast<size_t>(rows * cols), std::nanf(""));
    Im2Col(x.data(), channels, w, col.data());
    INFO("in " << c.in.size() << "-D, in[0] " << c.in[0] << ", kernel[0] " << c.kernel[0] << ", stride[0] "
               << c.stride[0] << ", pad[0] " << c.pad_begin[0]);
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t o = 0; o < cols; ++o) REQUIRE(col[static_cast<size_t>(r * cols + o)] == Expected(x, w, r, o));
    }
    // <Col2Im(g), x> == <g, Im2Col(x)> for any g.
    std::vector<float> g(col.size());
    for (size_t i = 0; i < g.size(); ++i) g[i] = static_cast<float>((i * 31) % 17) - 8.0f;
    std::vector<float> back(x.size(), 0.0f);
    Col2Im(g.data(), channels, w, back.data());
    double lhs = 0, rhs = 0;
    for (size_t i = 0; i < x.size(); ++i) lhs += static_cast<double>(back[i]) * x[i];
    for (size_t i = 0; i < g.size(); ++i) rhs += static_cast<double>(g[i]) * col[i];
    CHECK(lhs == Approx(rhs).epsilon(1e-9));
  }
}

TEST_CASE("Im2Col and Col2Im by position tile equal the whole column matrix", "[exec][im2col]") {
  // Tiles of 1 position, parts of rows, whole rows, rows plus a part, more than a plane (3-D),
  // and all: every column as in the whole matrix, and the tiles' Col2Im sums the whole one's.
  const int64_t channels = 2;
  for (const Case& c : Cases()) {
    const Window3 w = WindowOf(c);
    const int64_t rows = channels * w.KernelSize(), cols = w.OutSize();
    const std::vector<float> x = Image(channels, w, 89, 0.5f);
    std::vector<float> whole(static_cast<size_t>(rows * cols));
    Im2Col(x.data(), channels, w, whole.data());
    // Small integers: the sums are exact whatever order the tiles add them in.
    std::vector<float> g(whole.size());
    for (size_t i = 0; i < g.size(); ++i) g[i] = static_cast<float>((i * 13) % 11) - 5.0f;
    std::vector<float> back_whole(x.size(), 0.0f);
    Col2Im(g.data(), channels, w, back_whole.data());
    const int64_t row_len = w.out[2], plane = w.out[1] * w.out[2];
    for (int64_t tile : {int64_t{1}, int64_t{2}, row_len - 1, row_len, row_len + 1, 2 * row_len + 3, plane + 1, cols}) {
      if (tile <= 0) continue;
      INFO("in " << c.in.size() << "-D, in[0] " << c.in[0] << ", kernel[0] " << c.kernel[0] << ", tile " << tile);
      std::vector<float> back(x.size(), 0.0f);
      ForEachTile(w, tile, [&](PositionRange r) {
        std::vector<float> col(static_cast<size_t>(rows * r.size()), std::nanf(""));
        Im2Col(x.data(), channels, w, col.data(), r);
        for (int64_t row = 0; row < rows; ++row) {
          for (int64_t o = r.begin; o < r.end; ++o) {
            REQUIRE(col[static_cast<size_t>(row * r.size() + o - r.begin)] == whole[static_cast<size_t>(row * cols + o)]);
          }
        }
        std::vector<float> gt(col.size());
        for (int64_t row = 0; row < rows; ++row) {
          for (int64_t o = r.begin; o < r.end; ++o) {
            gt[static_cast<size_t>(row * r.size() + o - r.begin)] = g[static_cast<size_t>(row * cols + o)];
          }
        }
        Col2Im(gt.data(), channels, w, back.data(), r);
      });
      for (size_t i = 0; i < x.size(); ++i) REQUIRE(back[i] == back_whole[i]);
    }
  }
}

TEST_CASE("ColumnTilePositions: within the byte cap, whole rows, never skinnier than the floor", "[exec][im2col]") {
  const Window3 w = MakeWindow3({64, 64}, {64, 64}, {3, 3}, {1, 1}, {1, 1}, {1, 1});
  // 128 channels x 9 taps of float: 4,608 bytes a position, 227 fit in 1 MiB: 3 whole rows.
  CHECK(ColumnTilePositions(w, 128 * 9, 4) == 192);
  CHECK(ColumnTilePositions(w, 1, 4) == w.OutSize());  // everything fits
  // 4,608 rows: the floor of 64 positions (one row here) though it passes the cap.
  CHECK(ColumnTilePositions(w, 4608, 4) == 64);
  const Window3 line = MakeWindow3({100000}, {100000}, {3}, {1}, {1}, {1});
  CHECK(ColumnTilePositions(line, 512 * 3, 4) == kColumnTileBytes / (512 * 3 * 4));  // part of one long row
}

}  // namespace
}  // namespace memopt::math
