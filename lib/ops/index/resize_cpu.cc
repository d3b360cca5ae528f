// Resize (opset 10..19: nearest with every nearest_mode, linear and cubic, every
// coordinate_transformation_mode, antialias, exclude_outside, axes, keep_aspect_ratio_policy,
// tf_crop_and_resize extrapolation) and the deprecated Upsample.
//
// Interpolation is separable: each resized axis is processed in turn. For one output coordinate y
// the source coordinate x comes from the coordinate transformation; nearest picks one source index,
// linear/cubic weight the taps idx around x by K((idx - x) * s) where K is the triangle or cubic
// kernel and s = scale for antialiased downsampling (the kernel widens by 1/scale), else 1. Taps
// outside the input read the edge element (or are dropped and the weights renormalised with
// exclude_outside). Nearest copies elements exactly (any dtype); linear/cubic compute in double.
#include <algorithm>
#include <cmath>
#include <limits>

#include "exec/kernels/kernel_util.h"
#include "exec/kernels/tensor_common.h"
#include "ir/op_registry.h"

namespace memopt::tensor_kernels {
namespace {

enum class Mode { kNearest, kLinear, kCubic };

struct ResizeParams {
  Mode mode = Mode::kNearest;
  std::string coord = "half_pixel";
  std::string nearest = "round_prefer_floor";
  bool legacy_nearest = false;  // opset < 11: floor when upsampling, ceil when downsampling
  double cubic_a = -0.75;
  bool exclude_outside = false;
  bool antialias = false;
  double extrapolation = 0.0;
};

struct Tap {
  int64_t index;
  double weight;
};

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

// Taps of every output coordinate on one axis, plus the extrapolated flags (tf_crop_and_resize).
void AxisTaps(const ResizeParams& p, int64_t in, int64_t out, double scale, double roi_start, double roi_end,
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

// Interpolates `data` (doubles, shape `shape`) along `axis` to `out` coordinates.
std::vector<double> InterpolateAxis(const std::vector<double>& data, std::vector<int64_t>& shape, int64_t axis,
                                    const std::vector<std::vector<Tap>>& taps, const std::vector<bool>& extrapolated,
                                    double extrapolation) {
  const int64_t in = shape[axis], out = static_cast<int64_t>(taps.size());
  const int64_t outer = ProductOf(shape, 0, axis);
  const int64_t inner = ProductOf(shape, axis + 1, static_cast<int64_t>(shape.size()));
  std::vector<double> result(static_cast<size_t>(outer * out * inner), 0.0);
  ParallelFor(outer, out * inner * 4, [&](int64_t begin, int64_t end) {
    for (int64_t o = begin; o < end; ++o) {
      for (int64_t y = 0; y < out; ++y) {
        double* dst = result.data() + (o * out + y) * inner;
        if (extrapolated[y]) {
          std::fill(dst, dst + inner, extrapolation);
          continue;
        }
        for (const Tap& tap : taps[y]) {
          if (tap.weight == 0.0) continue;
          const double* src = data.data() + (o * in + tap.index) * inner;
          for (int64_t i = 0; i < inner; ++i) dst[i] += tap.weight * src[i];
        }
      }
    }
  });
  shape[axis] = out;
  return result;
}

template <typename T>
T StoreRounded(double v) {
  if constexpr (std::is_integral_v<T>) {
    v = std::nearbyint(v);
    v = std::clamp(v, static_cast<double>(std::numeric_limits<T>::lowest()),
                   static_cast<double>(std::numeric_limits<T>::max()));
  }
  return StoreAs<T>(v);
}

Status RunResize(KernelContext& ctx, const ResizeParams& p, const std::vector<double>& scales,
                 const std::vector<int64_t>& sizes, const std::vector<double>& roi) {
  const Tensor& x = ctx.input(0);
  const int64_t r = x.rank();
  std::vector<bool> resized(static_cast<size_t>(r), false);
  for (int64_t d = 0; d < r; ++d) {
    const bool trivial_roi = roi.empty() || (roi[d] == 0.0 && roi[r + d] == 1.0);
    resized[d] = !(scales[d] == 1.0 && sizes[d] == x.dim(d) && (trivial_roi || p.coord != "tf_crop_and_resize"));
    if (sizes[d] < 0) return ctx.Error("output size " + ListToString(sizes) + " is negative");
  }
  Tensor out = NewTensor(x.dtype(), sizes);
  if (out.numel() == 0) {
    ctx.outputs[0] = std::move(out);
    return Status::Ok();
  }
  if (x.numel() == 0) return ctx.Error("cannot resize the empty tensor " + x.Describe());
  std::vector<std::vector<std::vector<Tap>>> taps(static_cast<size_t>(r));
  std::vector<std::vector<bool>> extra(static_cast<size_t>(r));
  bool any_extrapolated = false;
  for (int64_t d = 0; d < r; ++d) {
    if (!resized[d]) continue;
    AxisTaps(p, x.dim(d), sizes[d], scales[d], roi.empty() ? 0.0 : roi[d], roi.empty() ? 1.0 : roi[r + d], taps[d],
             extra[d]);
    for (bool e : extra[d]) any_extrapolated = any_extrapolated || e;
  }
  if (p.mode == Mode::kNearest) {
    std::vector<std::vector<int64_t>> maps(static_cast<size_t>(r));
    for (int64_t d = 0; d < r; ++d) {
      maps[d].resize(static_cast<size_t>(sizes[d]));
      for (int64_t y = 0; y < sizes[d]; ++y) maps[d][y] = resized[d] ? taps[d][y][0].index : y;
    }
    CopyWithIndexMaps(x, out, maps);
    if (any_extrapolated) {
      const std::vector<int64_t> strides = Strides(sizes);
      for (int64_t i = 0; i < out.numel(); ++i) {
        bool e = false;
        for (int64_t d = 0; d < r && !e; ++d) e = resized[d] && extra[d][(i / strides[d]) % sizes[d]];
        if (e) out.SetFromDouble(i, p.extrapolation);
      }
    }
    ctx.outputs[0] = std::move(out);
    return Status::Ok();
  }
  MEMOPT_RETURN_IF_ERROR(DispatchNumeric(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* in = x.data<T>();
    std::vector<double> data(static_cast<size_t>(x.numel()));
    for (int64_t i = 0; i < x.numel(); ++i) data[i] = static_cast<double>(Load(in[i]));
    std::vector<int64_t> shape = x.shape();
    for (int64_t d = 0; d < r; ++d) {
      if (resized[d]) data = InterpolateAxis(data, shape, d, taps[d], extra[d], p.extrapolation);
    }
    T* o = out.data<T>();
    for (int64_t i = 0; i < out.numel(); ++i) o[i] = StoreRounded<T>(data[i]);
  }));
  ctx.outputs[0] = std::move(out);
  return Status::Ok();
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

Status ResizeKernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const int64_t r = x.rank();
  ResizeParams p;
  MEMOPT_ASSIGN_OR_RETURN(p.mode, ParseMode(ctx));
  const int version = ctx.node->since_version;
  const bool legacy = ctx.node->op_type == "Upsample" || (version != 0 && version < 11);
  if (legacy) {
    p.coord = "asymmetric";
    p.legacy_nearest = true;
    std::vector<double> scales;
    if (ctx.has_input(1)) {
      scales = DoublesOf(ctx.input(1));
    } else {
      for (const auto& a : ctx.node->proto.attribute()) {
        if (a.name() == "scales") scales.assign(a.floats().begin(), a.floats().end());
      }
    }
    if (static_cast<int64_t>(scales.size()) != r) {
      return ctx.Error("scales must have one entry per dim of " + x.Describe());
    }
    return RunResize(ctx, p, scales, SizesFromScales(x, scales), {});
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
  if (ctx.has_input(1) && ctx.input(1).numel() > 0) {
    const std::vector<double> given = DoublesOf(ctx.input(1));
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
  if (ctx.has_input(3) && ctx.input(3).numel() > 0) {
    MEMOPT_ASSIGN_OR_RETURN(std::vector<int64_t> given, ReadIntInput(ctx, 3, "sizes"));
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
  } else if (ctx.has_input(2) && ctx.input(2).numel() > 0) {
    const std::vector<double> given = DoublesOf(ctx.input(2));
    if (given.size() != na) return ctx.Error("scales must have " + std::to_string(na) + " entries");
    for (size_t i = 0; i < na; ++i) {
      if (given[i] <= 0.0) return ctx.Error("scales must be positive");
      scales[axes[i]] = given[i];
    }
    sizes = SizesFromScales(x, scales);
  } else {
    return ctx.Error("needs either scales (input 2) or sizes (input 3)");
  }
  return RunResize(ctx, p, scales, sizes, roi);
}

}  // namespace

static void RegisterResizeKernels(OpRegistry& r) {
  r.SetCpuKernel("", "Resize", ResizeKernel);
  r.SetCpuKernel("", "Upsample", ResizeKernel);
}

}  // namespace memopt::tensor_kernels

MEMOPT_OPS(index, resize_cpu) {
  memopt::tensor_kernels::RegisterResizeKernels(ops);
}
