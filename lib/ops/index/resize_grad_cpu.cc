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

/// The adjoint of interpolating axis `axis` from `in` to taps.size() coordinates: `data` has the
/// interpolated shape `shape`; returns the gradient with shape[axis] = in.
std::vector<double> AxisAdjoint(const std::vector<double>& data, std::vector<int64_t>& shape, int64_t axis, int64_t in,
                                const std::vector<std::vector<Tap>>& taps, const std::vector<bool>& extrapolated) {
  const int64_t out = shape[axis];
  const int64_t outer = ProductOf(shape, 0, axis);
  const int64_t inner = ProductOf(shape, axis + 1, static_cast<int64_t>(shape.size()));
  std::vector<double> result(static_cast<size_t>(outer * in * inner), 0.0);
  ParallelFor(outer, out * inner * 4, [&](int64_t begin, int64_t end) {
    for (int64_t o = begin; o < end; ++o) {
      for (int64_t y = 0; y < out; ++y) {
        if (extrapolated[y]) continue;
        const double* src = data.data() + (o * out + y) * inner;
        for (const Tap& tap : taps[y]) {
          if (tap.weight == 0.0) continue;
          double* dst = result.data() + (o * in + tap.index) * inner;
          for (int64_t i = 0; i < inner; ++i) dst[i] += tap.weight * src[i];
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
  std::vector<std::vector<std::vector<Tap>>> taps(static_cast<size_t>(r));
  std::vector<std::vector<bool>> extrapolated(static_cast<size_t>(r));
  for (int64_t d = 0; d < r; ++d) {
    if (setup.resized[d]) AxisTaps(setup, x.shape(), d, taps[d], extrapolated[d]);
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
          if (setup.resized[d]) data = AxisAdjoint(data, shape, d - sl.axis, x.dim(d), taps[d], extrapolated[d]);
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
