// Resize (opset 10..19: nearest with every nearest_mode, linear and cubic, every
// coordinate_transformation_mode, antialias, exclude_outside, axes, keep_aspect_ratio_policy,
// tf_crop_and_resize extrapolation) and the deprecated Upsample.
//
// The decode and the taps are in resize_util.h (shared with ResizeGrad). Nearest copies elements
// exactly (any dtype); linear/cubic compute in double, one resized axis after the other, a slice of
// the leading unresized axes at a time.
#include <algorithm>
#include <cmath>
#include <limits>

#include "exec/kernels/kernel_util.h"
#include "exec/kernels/tensor_common.h"
#include "ir/op_registry.h"
#include "ops/index/resize_util.h"

namespace memopt::tensor_kernels {
namespace {

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
        if (inner == 1) {  // the last axis: the sum in a register, one store
          const double* src = data.data() + o * in;
          double acc = 0.0;
          for (const Tap& tap : taps[y]) {
            if (tap.weight != 0.0) acc += tap.weight * src[tap.index];
          }
          dst[0] = acc;
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

Status RunResize(KernelContext& ctx, const ResizeSetup& setup) {
  const ResizeParams& p = setup.params;
  const std::vector<int64_t>& sizes = setup.sizes;
  const std::vector<bool>& resized = setup.resized;
  const Tensor& x = ctx.input(0);
  const int64_t r = x.rank();
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
    AxisTaps(setup, x.shape(), d, taps[d], extra[d]);
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
  // A slice of the leading axes no tap moves at a time (a plane of an image batch): its elements
  // in double, interpolated axis by axis, then stored. Slices run in parallel; one slice (the
  // first axis resized) parallelises inside InterpolateAxis instead.
  const ResizeSlices sl = SlicesOf(resized, x.shape(), sizes);
  MEMOPT_RETURN_IF_ERROR(DispatchNumeric(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* in = x.data<T>();
    T* o = out.data<T>();
    ParallelFor(sl.count, sl.out_size * 8, [&](int64_t first, int64_t last) {
      for (int64_t s = first; s < last; ++s) {
        std::vector<double> data(static_cast<size_t>(sl.in_size));
        for (int64_t i = 0; i < sl.in_size; ++i) data[i] = static_cast<double>(Load(in[s * sl.in_size + i]));
        std::vector<int64_t> shape(x.shape().begin() + sl.axis, x.shape().end());
        for (int64_t d = sl.axis; d < r; ++d) {
          if (resized[d]) data = InterpolateAxis(data, shape, d - sl.axis, taps[d], extra[d], p.extrapolation);
        }
        for (int64_t i = 0; i < sl.out_size; ++i) o[s * sl.out_size + i] = StoreRounded<T>(data[i]);
      }
    });
  }));
  ctx.outputs[0] = std::move(out);
  return Status::Ok();
}

Status ResizeKernel(KernelContext& ctx) {
  MEMOPT_ASSIGN_OR_RETURN(ResizeSetup setup, DecodeResize(ctx, 0));
  return RunResize(ctx, setup);
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
