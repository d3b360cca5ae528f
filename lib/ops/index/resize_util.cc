#include "ops/index/resize_util.h"

#include <algorithm>
#include <cmath>

#include "exec/kernels/kernel_util.h"
#include "exec/kernels/tensor_common.h"

namespace memopt::tensor_kernels {
namespace {

// Source coordinate of output coordinate y on one axis.
double SourceCoord(const ResizeParams& p, int64_t y, double scale, int64_t in, int64_t out, double roi_start,
                   double roi_end) {
  const double out_width = scale * static_cast<double>(in);
  const double yd = static_cast<double>(y);
  const std::string& c = p.coord;
  if (c == "asymmetric") return yd / scale;
  if (c == "align_corners") return out_width == 1.0 ? 0.0 : yd * (in - 1) / (out_width - 1.0);
  if (c == "pytorch_half_pixel") return out_width == 1.0 ? -0.5 : (yd + 0.5) / scale - 0.5;
  if (c == "half_pixel_symmetric") {
    const double adjustment = static_cast<double>(out) / out_width;
    const double offset = static_cast<double>(in) / 2.0 * (1.0 - adjustment);
    return offset + (yd + 0.5) / scale - 0.5;
  }
  if (c == "tf_crop_and_resize") {
    const double x = out_width == 1.0 ? (roi_end - roi_start) * (in - 1) / 2.0
                                      : yd * (roi_end - roi_start) * (in - 1) / (out_width - 1.0);
    return x + roi_start * (in - 1);
  }
  return (yd + 0.5) / scale - 0.5;  // half_pixel
}

int64_t NearestIndex(const ResizeParams& p, double x, double scale) {
  const double fl = std::floor(x);
  int64_t idx;
  if (p.legacy_nearest) {
    idx = static_cast<int64_t>(scale < 1.0 ? std::ceil(x) : fl);
  } else if (x == fl) {
    idx = static_cast<int64_t>(x);
  } else {
    const double frac = x - fl;
    bool up;
    if (p.nearest == "round_prefer_ceil") {
      up = frac >= 0.5;
    } else if (p.nearest == "floor") {
      up = false;
    } else if (p.nearest == "ceil") {
      up = true;
    } else {
      up = frac > 0.5;  // round_prefer_floor
    }
    idx = static_cast<int64_t>(fl) + (up ? 1 : 0);
  }
  return idx;
}

double Kernel(const ResizeParams& p, double t) {
  t = std::fabs(t);
  if (p.mode == Mode::kLinear) return std::max(0.0, 1.0 - t);
  const double a = p.cubic_a;
  if (t <= 1.0) return ((a + 2.0) * t - (a + 3.0)) * t * t + 1.0;
  if (t < 2.0) return ((a * t - 5.0 * a) * t + 8.0 * a) * t - 4.0 * a;
  return 0.0;
}

void TapsOfAxis(const ResizeParams& p, int64_t in, int64_t out, double scale, double roi_start, double roi_end,
              std::vector<std::vector<Tap>>& taps, std::vector<bool>& extrapolated) {
  taps.assign(static_cast<size_t>(out), {});
  extrapolated.assign(static_cast<size_t>(out), false);
  const double radius = p.mode == Mode::kCubic ? 2.0 : 1.0;
  const double s = (p.antialias && p.mode != Mode::kNearest && scale < 1.0) ? scale : 1.0;
  const int64_t start = static_cast<int64_t>(std::floor(-radius / s)) + 1;
  const int64_t count = 2 * (1 - start);
  for (int64_t y = 0; y < out; ++y) {
    const double x = SourceCoord(p, y, scale, in, out, roi_start, roi_end);
    if (p.coord == "tf_crop_and_resize" && (x < 0.0 || x > static_cast<double>(in - 1))) extrapolated[y] = true;
    std::vector<Tap>& t = taps[y];
    if (p.mode == Mode::kNearest) {
      t.push_back({std::clamp<int64_t>(NearestIndex(p, x, scale), 0, in - 1), 1.0});
      continue;
    }
    const double fl = std::floor(x);
    const int64_t base = static_cast<int64_t>(fl) - (x == fl ? 1 : 0);
    double sum = 0.0;
    for (int64_t j = 0; j < count; ++j) {
      const int64_t idx = base + start + j;
      const double w = Kernel(p, (static_cast<double>(idx) - x) * s);
      t.push_back({idx, w});
      sum += w;
    }
    if (s != 1.0 && sum != 0.0) {
      for (Tap& tap : t) tap.weight /= sum;
    }
    if (p.exclude_outside) {
      double kept = 0.0;
      for (Tap& tap : t) {
        if (tap.index < 0 || tap.index >= in) tap.weight = 0.0;
        kept += tap.weight;
      }
      if (kept != 0.0) {
        for (Tap& tap : t) tap.weight /= kept;
      }
    }
    for (Tap& tap : t) tap.index = std::clamp<int64_t>(tap.index, 0, in - 1);
  }
}

Expected<Mode> ParseMode(const KernelContext& ctx) {
  const std::string m = ctx.node->GetString("mode", "nearest");
  if (m == "nearest") return Mode::kNearest;
  if (m == "linear" || m == "bilinear" || m == "trilinear") return Mode::kLinear;
  if (m == "cubic" || m == "bicubic") return Mode::kCubic;
  return ctx.Error("unknown mode '" + m + "' (expected nearest, linear or cubic)");
}

std::vector<double> DoublesOf(const Tensor& t) {
  std::vector<double> v(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) v[i] = t.GetAsDouble(i);
  return v;
}

// Output sizes from per-axis scales: floor(in * scale).
std::vector<int64_t> SizesFromScales(const Tensor& x, const std::vector<double>& scales) {
  std::vector<int64_t> sizes(static_cast<size_t>(x.rank()));
  for (int64_t d = 0; d < x.rank(); ++d) sizes[d] = static_cast<int64_t>(std::floor(x.dim(d) * scales[d]));
  return sizes;
}

Expected<ResizeSetup> Decode(const KernelContext& ctx, int x_index) {
  auto input = [&](int i) -> const Tensor& { return ctx.input(x_index + i); };
  auto has_input = [&](int i) { return ctx.has_input(x_index + i); };
  const Tensor& x = input(0);
  const int64_t r = x.rank();
  ResizeParams p;
  MEMOPT_ASSIGN_OR_RETURN(p.mode, ParseMode(ctx));
  const int version = ctx.node->since_version;
  // ResizeGrad (com.microsoft, version 1) carries the attributes of a Resize of opset 11 or later.
  const bool legacy = x_index == 0 && (ctx.node->op_type == "Upsample" || (version != 0 && version < 11));
  if (legacy) {
    p.coord = "asymmetric";
    p.legacy_nearest = true;
    std::vector<double> scales;
    if (has_input(1)) {
      scales = DoublesOf(input(1));
    } else {
      for (const auto& a : ctx.node->proto.attribute()) {
        if (a.name() == "scales") scales.assign(a.floats().begin(), a.floats().end());
      }
    }
    if (static_cast<int64_t>(scales.size()) != r) {
      return ctx.Error("scales must have one entry per dim of " + x.Describe());
    }
    return ResizeSetup{p, scales, SizesFromScales(x, scales), {}, {}};
  }
  p.coord = ctx.node->GetString("coordinate_transformation_mode", "half_pixel");
  p.nearest = ctx.node->GetString("nearest_mode", "round_prefer_floor");
  p.cubic_a = ctx.node->GetFloat("cubic_coeff_a", -0.75f);
  p.exclude_outside = ctx.node->GetInt("exclude_outside", 0) != 0;
  p.antialias = ctx.node->GetInt("antialias", 0) != 0;
  p.extrapolation = ctx.node->GetFloat("extrapolation_value", 0.0f);
  const std::string policy = ctx.node->GetString("keep_aspect_ratio_policy", "stretch");

  std::vector<int64_t> axes;
  if (ctx.node->HasAttr("axes")) {
    for (int64_t a : ctx.node->GetInts("axes")) {
      MEMOPT_ASSIGN_OR_RETURN(int64_t n, CheckedAxis(ctx, a, r, "resize axis"));
      axes.push_back(n);
    }
  } else {
    for (int64_t d = 0; d < r; ++d) axes.push_back(d);
  }
  const size_t na = axes.size();
  std::vector<double> roi;
  if (has_input(1) && input(1).numel() > 0) {
    const std::vector<double> given = DoublesOf(input(1));
    if (given.size() != 2 * na) return ctx.Error("roi must have 2 * " + std::to_string(na) + " entries");
    roi.assign(static_cast<size_t>(2 * r), 0.0);
    for (int64_t d = 0; d < r; ++d) roi[r + d] = 1.0;
    for (size_t i = 0; i < na; ++i) {
      roi[axes[i]] = given[i];
      roi[r + axes[i]] = given[na + i];
    }
  }
  std::vector<double> scales(static_cast<size_t>(r), 1.0);
  std::vector<int64_t> sizes = x.shape();
  if (has_input(3) && input(3).numel() > 0) {
    MEMOPT_ASSIGN_OR_RETURN(std::vector<int64_t> given, ReadIntInput(ctx, x_index + 3, "sizes"));
    if (given.size() != na) return ctx.Error("sizes must have " + std::to_string(na) + " entries");
    for (size_t i = 0; i < na; ++i) {
      sizes[axes[i]] = given[i];
      scales[axes[i]] = static_cast<double>(given[i]) / static_cast<double>(x.dim(axes[i]));
    }
    if (policy == "not_larger" || policy == "not_smaller") {
      double s = scales[axes[0]];
      for (int64_t a : axes) s = policy == "not_larger" ? std::min(s, scales[a]) : std::max(s, scales[a]);
      for (int64_t a : axes) {
        scales[a] = s;
        sizes[a] = static_cast<int64_t>(std::floor(s * static_cast<double>(x.dim(a)) + 0.5));
      }
    } else if (policy != "stretch") {
      return ctx.Error("unknown keep_aspect_ratio_policy '" + policy + "'");
    }
  } else if (has_input(2) && input(2).numel() > 0) {
    const std::vector<double> given = DoublesOf(input(2));
    if (given.size() != na) return ctx.Error("scales must have " + std::to_string(na) + " entries");
    for (size_t i = 0; i < na; ++i) {
      if (given[i] <= 0.0) return ctx.Error("scales must be positive");
      scales[axes[i]] = given[i];
    }
    sizes = SizesFromScales(x, scales);
  } else {
    return ctx.Error("needs either scales (input 2) or sizes (input 3)");
  }
  return ResizeSetup{p, scales, sizes, roi, {}};
}

}  // namespace

Expected<ResizeSetup> DecodeResize(const KernelContext& ctx, int x_index) {
  MEMOPT_ASSIGN_OR_RETURN(ResizeSetup s, Decode(ctx, x_index));
  const std::vector<int64_t>& in = ctx.input(x_index).shape();
  const int64_t r = static_cast<int64_t>(in.size());
  s.resized.assign(static_cast<size_t>(r), false);
  for (int64_t d = 0; d < r; ++d) {
    if (s.sizes[d] < 0) return ctx.Error("output size " + ListToString(s.sizes) + " is negative");
    const bool trivial_roi = s.roi.empty() || (s.roi[d] == 0.0 && s.roi[r + d] == 1.0);
    s.resized[d] = !(s.scales[d] == 1.0 && s.sizes[d] == in[d] && (trivial_roi || s.params.coord != "tf_crop_and_resize"));
  }
  return s;
}

void AxisTaps(const ResizeSetup& s, const std::vector<int64_t>& in_shape, int64_t axis,
              std::vector<std::vector<Tap>>& taps, std::vector<bool>& extrapolated) {
  const int64_t r = static_cast<int64_t>(in_shape.size());
  TapsOfAxis(s.params, in_shape[axis], s.sizes[axis], s.scales[axis], s.roi.empty() ? 0.0 : s.roi[axis],
             s.roi.empty() ? 1.0 : s.roi[r + axis], taps, extrapolated);
}

ResizeSlices SlicesOf(const std::vector<bool>& resized, const std::vector<int64_t>& in_shape,
                      const std::vector<int64_t>& out_shape) {
  ResizeSlices sl;
  const int64_t r = static_cast<int64_t>(in_shape.size());
  while (sl.axis < r && !resized[static_cast<size_t>(sl.axis)]) ++sl.axis;
  if (sl.axis == r) sl.axis = 0;  // nothing resized: one slice, the whole tensor
  sl.count = ProductOf(in_shape, 0, sl.axis);
  sl.in_size = ProductOf(in_shape, sl.axis, r);
  sl.out_size = ProductOf(out_shape, sl.axis, r);
  return sl;
}

}  // namespace memopt::tensor_kernels
