// ResizeGrad (com.microsoft): the gradient of Resize. Inputs dY, X (its shape only), and the
// forward's roi?, scales?, sizes? (sizes is memopt's addition to ONNX Runtime's schema, for a Resize
// given sizes); attributes the forward's. Every Resize mode is linear in X and separable, so dX
// reads the forward's taps backwards (resize_util.h): axis by axis in reverse order, each output
// coordinate adds weight * dY into the input elements it was computed from; outputs that
// tf_crop_and_resize extrapolated add nothing. Sums in double, a slice of the leading unresized
// axes at a time.
#include "exec/kernels/elementwise.h"
#include "exec/kernels/kernel_util.h"
#include "exec/kernels/tensor_common.h"
#include "ir/op_registry.h"
#include "ops/index/resize_util.h"

namespace memopt::tensor_kernels {
namespace {

/// One axis's taps read backwards: for each input coordinate i, the (output coordinate, weight)
/// pairs that read it, in increasing output coordinate (tap order within one), without the
/// extrapolated outputs and zero weights.
struct ReverseTaps {
  std::vector<int64_t> start;  ///< input coordinate i's pairs are [start[i], start[i + 1])
  std::vector<int64_t> from;
  std::vector<double> weight;
};

ReverseTaps Reverse(int64_t in, const std::vector<std::vector<Tap>>& taps, const std::vector<bool>& extrapolated) {
  ReverseTaps r;
  r.start.assign(static_cast<size_t>(in + 1), 0);
  const int64_t out = static_cast<int64_t>(taps.size());
  const auto used = [&](int64_t y, const Tap& t) { return !extrapolated[y] && t.weight != 0.0; };
  for (int64_t y = 0; y < out; ++y) {
    for (const Tap& t : taps[y]) {
      if (used(y, t)) ++r.start[t.index + 1];
    }
  }
  for (int64_t i = 0; i < in; ++i) r.start[i + 1] += r.start[i];
  r.from.resize(static_cast<size_t>(r.start[in]));
  r.weight.resize(r.from.size());
  std::vector<int64_t> fill(r.start.begin(), r.start.end() - 1);
  for (int64_t y = 0; y < out; ++y) {
    for (const Tap& t : taps[y]) {
      if (!used(y, t)) continue;
      const int64_t k = fill[t.index]++;
      r.from[k] = y;
      r.weight[k] = t.weight;
    }
  }
  return r;
}

/// The adjoint of interpolating axis `axis` from `in` to `out` coordinates: `data` has the
/// interpolated shape `shape`; returns the gradient with shape[axis] = in. Each input element
/// sums its terms in increasing output coordinate, in a register along the last axis (one store
/// each, not a store per term into the element the previous term wrote).
std::vector<double> AxisAdjoint(const std::vector<double>& data, std::vector<int64_t>& shape, int64_t axis, int64_t in,
                                const ReverseTaps& rev) {
  const int64_t out = shape[axis];
  const int64_t outer = ProductOf(shape, 0, axis);
  const int64_t inner = ProductOf(shape, axis + 1, static_cast<int64_t>(shape.size()));
  std::vector<double> result(static_cast<size_t>(outer * in * inner), 0.0);
  ParallelFor(outer, out * inner * 4, [&](int64_t begin, int64_t end) {
    for (int64_t o = begin; o < end; ++o) {
      const double* src = data.data() + o * out * inner;
      double* dst = result.data() + o * in * inner;
      for (int64_t i = 0; i < in; ++i) {
        if (inner == 1) {
          double acc = 0.0;
          for (int64_t k = rev.start[i]; k < rev.start[i + 1]; ++k) acc += rev.weight[k] * src[rev.from[k]];
          dst[i] = acc;
          continue;
        }
        double* d = dst + i * inner;
        for (int64_t k = rev.start[i]; k < rev.start[i + 1]; ++k) {
          const double w = rev.weight[k];
          const double* sp = src + rev.from[k] * inner;
          for (int64_t j = 0; j < inner; ++j) d[j] += w * sp[j];
        }
      }
    }
  });
  shape[axis] = in;
  return result;
}

Status ResizeGradKernel(KernelContext& ctx) {
  const Tensor& dy = ctx.input(0);
  const Tensor& x = ctx.input(1);
  MEMOPT_ASSIGN_OR_RETURN(ResizeSetup setup, DecodeResize(ctx, 1));
  if (dy.shape() != setup.sizes) {
    return ctx.Error("dY " + dy.Describe() + " does not have the shape the forward Resize makes, " +
                     ShapeToString(setup.sizes));
  }
  Tensor dx = NewTensor(dy.dtype(), x.shape());
  if (dx.numel() == 0 || dy.numel() == 0) {
    ctx.outputs[0] = std::move(dx);
    return Status::Ok();
  }
  const int64_t r = x.rank();
  std::vector<ReverseTaps> rev(static_cast<size_t>(r));
  for (int64_t d = 0; d < r; ++d) {
    if (!setup.resized[d]) continue;
    std::vector<std::vector<Tap>> taps;
    std::vector<bool> extrapolated;
    AxisTaps(setup, x.shape(), d, taps, extrapolated);
    rev[d] = Reverse(x.dim(d), taps, extrapolated);
  }
  // A slice of the leading axes no tap moves at a time (resize_util.h), as the forward does: dY's
  // slice in double, its axes' adjoints in reverse order, dX's slice stored.
  const ResizeSlices sl = SlicesOf(setup.resized, x.shape(), setup.sizes);
  return DispatchFloat(dy.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* g = dy.data<T>();
    T* o = dx.data<T>();
    ParallelFor(sl.count, sl.out_size * 8, [&](int64_t first, int64_t last) {
      for (int64_t s = first; s < last; ++s) {
        std::vector<double> data(static_cast<size_t>(sl.out_size));
        for (int64_t i = 0; i < sl.out_size; ++i) data[i] = static_cast<double>(Load(g[s * sl.out_size + i]));
        std::vector<int64_t> shape(setup.sizes.begin() + sl.axis, setup.sizes.end());
        for (int64_t d = r - 1; d >= sl.axis; --d) {
          if (setup.resized[d]) data = AxisAdjoint(data, shape, d - sl.axis, x.dim(d), rev[d]);
        }
        for (int64_t i = 0; i < sl.in_size; ++i) o[s * sl.in_size + i] = StoreAs<T>(data[i]);
      }
    });
    ctx.outputs[0] = std::move(dx);
  });
}

}  // namespace
}  // namespace memopt::tensor_kernels

MEMOPT_OPS(index, resize_grad_cpu) {
  ops.SetCpuKernel(memopt::kMicrosoftDomain, "ResizeGrad", memopt::tensor_kernels::ResizeGradKernel,
                   memopt::elementwise::FloatTypes());
}
