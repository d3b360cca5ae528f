// MaxPool against a tap-by-tap scan of each window (the ONNX definition: the largest in-image
// value, NaN if any tap is; Indices at the first tap that holds it), over 1-D to 3-D windows that
// take the fixed-width row kernels (width 2 or 3, stride 1 or 2) and those that do not (dilation,
// other widths, Indices, ceil_mode, pads), on data with ties, NaN and -inf.
#include <algorithm>
#include <limits>

#include "helpers/math_test_util.h"

namespace memopt::math::testing {
namespace {

struct PoolCase {
  std::vector<int64_t> in, kernel, stride, dilation, pad_begin, pad_end;
  bool ceil_mode = false;
};

std::string Ints(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

/// Output size per dim (ONNX's rule, the last window starting inside the image or begin pad).
std::vector<int64_t> OutDims(const PoolCase& c) {
  std::vector<int64_t> out;
  for (size_t i = 0; i < c.in.size(); ++i) {
    const int64_t reach = (c.kernel[i] - 1) * c.dilation[i] + 1;
    const int64_t span = c.in[i] + c.pad_begin[i] + c.pad_end[i] - reach;
    int64_t o = (c.ceil_mode ? (span + c.stride[i] - 1) / c.stride[i] : span / c.stride[i]) + 1;
    if (c.ceil_mode && (o - 1) * c.stride[i] >= c.in[i] + c.pad_begin[i]) --o;
    out.push_back(o);
  }
  return out;
}

/// The window's maximum and the flat (row-major, whole tensor) index of its first holder.
std::pair<double, int64_t> ScanWindow(const std::vector<double>& x, const PoolCase& c, int64_t plane,
                                      const std::vector<int64_t>& pos) {
  const size_t sd = c.in.size();
  int64_t plane_size = 1;
  for (int64_t d : c.in) plane_size *= d;
  int64_t taps = 1;
  for (int64_t k : c.kernel) taps *= k;
  double best = 0;
  int64_t best_at = -1;
  for (int64_t t = 0; t < taps; ++t) {
    int64_t rest = t, flat = 0;
    bool inside = true;
    std::vector<int64_t> k(sd);
    for (size_t i = sd; i-- > 0;) {
      k[i] = rest % c.kernel[i];
      rest /= c.kernel[i];
    }
    for (size_t i = 0; i < sd; ++i) {
      const int64_t at = pos[i] * c.stride[i] - c.pad_begin[i] + k[i] * c.dilation[i];
      inside = inside && at >= 0 && at < c.in[i];
      flat = flat * c.in[i] + at;
    }
    if (!inside) continue;
    const double v = x[static_cast<size_t>(plane * plane_size + flat)];
    if (best_at < 0 || v > best || (std::isnan(v) && !std::isnan(best))) {
      best = v;
      best_at = plane * plane_size + flat;
    }
  }
  return {best_at < 0 ? double(std::numeric_limits<float>::lowest()) : best, best_at};
}

/// A row-major position within a plane of dims `in` counted column-major (storage_order = 1).
int64_t ColumnMajor(int64_t flat, const std::vector<int64_t>& in) {
  int64_t local = 0, stride = 1;
  std::vector<int64_t> pos(in.size());
  for (size_t i = in.size(); i-- > 0;) {
    pos[i] = flat % in[i];
    flat /= in[i];
  }
  for (size_t i = 0; i < in.size(); ++i) {
    local += pos[i] * stride;
    stride *= in[i];
  }
  return local;
}

void CheckMaxPool(const PoolCase& c, bool with_indices, bool col_major) {
  const int64_t n = 2, ch = 3;
  std::vector<int64_t> x_shape = {n, ch};
  x_shape.insert(x_shape.end(), c.in.begin(), c.in.end());
  const std::vector<int64_t> out = OutDims(c);
  std::vector<int64_t> y_shape = {n, ch};
  y_shape.insert(y_shape.end(), out.begin(), out.end());
  int64_t numel = 1;
  for (int64_t d : x_shape) numel *= d;
  // Small integers repeat, so windows hold ties; every 37th is NaN and every 23rd -inf.
  std::vector<double> x(static_cast<size_t>(numel));
  for (int64_t i = 0; i < numel; ++i) {
    x[static_cast<size_t>(i)] = i % 37 == 5   ? std::nan("")
                                : i % 23 == 3 ? -std::numeric_limits<double>::infinity()
                                              : static_cast<double>((i * 7919) % 13) - 6;
  }
  std::vector<int64_t> pads = c.pad_begin;
  pads.insert(pads.end(), c.pad_end.begin(), c.pad_end.end());
  const std::string attrs = "kernel_shape: ints = " + Ints(c.kernel) + ", strides: ints = " + Ints(c.stride) +
                            ", dilations: ints = " + Ints(c.dilation) + ", pads: ints = " + Ints(pads) +
                            ", ceil_mode: int = " + (c.ceil_mode ? "1" : "0") +
                            ", storage_order: int = " + (col_major ? "1" : "0");
  const std::string outs = with_indices ? "y, i" : "y";
  const std::string text = "<ir_version: 8, opset_import: [\"\" : 17]>\ng (float" + Ints(x_shape) + " x) => (float" +
                           Ints(y_shape) + " y" + (with_indices ? ", int64" + Ints(y_shape) + " i" : std::string()) +
                           ") { " + outs + " = MaxPool <" + attrs + "> (x) }";
  INFO(text);
  const auto result = RunText(text, {{"x", F(x_shape, x)}});
  const Tensor& y = result.at("y");
  REQUIRE(y.shape() == y_shape);
  const int64_t osize = y.numel() / (n * ch);
  for (int64_t o = 0; o < y.numel(); ++o) {
    const int64_t plane = o / osize;
    std::vector<int64_t> pos(out.size());
    for (size_t i = out.size(), rest = static_cast<size_t>(o % osize); i-- > 0;) {
      pos[i] = static_cast<int64_t>(rest) % out[i];
      rest /= static_cast<size_t>(out[i]);
    }
    const auto [want, want_at] = ScanWindow(x, c, plane, pos);
    const double got = y.GetAsDouble(o);
    INFO("output " << o << ": " << got << ", expected " << want);
    if (std::isnan(want)) {
      CHECK(std::isnan(got));
    } else {
      CHECK(got == want);
    }
    if (with_indices) {
      const int64_t plane_size = x.size() / static_cast<size_t>(n * ch);
      const int64_t want_index =
          want_at < 0 || !col_major ? want_at : plane * plane_size + ColumnMajor(want_at % plane_size, c.in);
      CHECK(result.at("i").GetAsDouble(o) == static_cast<double>(want_index));
    }
  }
}

TEST_CASE("MaxPool equals a tap-by-tap scan of each window", "[exec][kernels][math][pool]") {
  const std::vector<PoolCase> cases = {
      {{8, 8}, {2, 2}, {2, 2}, {1, 1}, {0, 0}, {0, 0}},          // 2x2 stride 2: row kernel <2, 2>
      {{9, 7}, {2, 2}, {2, 2}, {1, 1}, {0, 0}, {0, 0}, true},    // ceil_mode: a half window per row
      {{9, 9}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}},          // ResNet's 3x3 s2 p1: <3, 2>, edges
      {{7, 6}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}},          // 3x3 same: <3, 1>
      {{6, 7}, {3, 3}, {1, 1}, {1, 1}, {0, 0}, {0, 0}},          // 3x3 valid: <3, 1>, no edges
      {{6, 6}, {3, 3}, {1, 2}, {1, 1}, {2, 2}, {0, 2}},          // pads of 2: windows with one tap
      {{8, 8}, {2, 2}, {1, 1}, {1, 1}, {0, 0}, {0, 0}},          // width 2 stride 1: generic path
      {{9, 9}, {3, 3}, {2, 2}, {2, 2}, {1, 1}, {1, 1}},          // dilated: generic path
      {{7, 9}, {2, 4}, {3, 3}, {1, 1}, {1, 1}, {1, 2}},          // width 4, stride 3: generic path
      {{11}, {3}, {2}, {1}, {1}, {1}},                          // 1-D
      {{4, 5, 6}, {2, 2, 2}, {2, 2, 2}, {1, 1, 1}, {0, 0, 0}, {0, 0, 0}},  // 3-D <2, 2>
      {{5, 4, 7}, {3, 2, 3}, {1, 2, 2}, {1, 1, 1}, {1, 0, 1}, {1, 1, 1}},  // 3-D <3, 2>, pads
  };
  for (const PoolCase& c : cases) {
    for (int variant = 0; variant < 3; ++variant) {  // no Indices, Indices row-major, column-major
      INFO("in " << Ints(c.in) << " kernel " << Ints(c.kernel) << " stride " << Ints(c.stride) << " variant "
                 << variant);
      CheckMaxPool(c, variant > 0, variant == 2);
    }
  }
}

}  // namespace
}  // namespace memopt::math::testing
