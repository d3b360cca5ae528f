// Conv (1-D/2-D/3-D, group, strides, dilations, pads, auto_pad). Unit-stride 1-D/2-D windows of
// more than one tap in float run the direct kernel (conv_direct.h); the rest per image and group
// im2col then one GEMM  Y_g[M/g, out] = W_g[M/g, C/g * k] * col[C/g * k, out], the bias added
// after it; images run in parallel.
#include <optional>

#include "exec/kernels/conv_direct.h"
#include "exec/kernels/im2col.h"
#include "exec/kernels/math_util.h"
#include "ir/op_registry.h"

namespace memopt::math {
namespace {

Status Conv(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& w = ctx.input(1);
  const Tensor* bias = ctx.has_input(2) ? &ctx.input(2) : nullptr;
  if (!IsFloatFamily(x.dtype())) return UnsupportedDtype(ctx, x.dtype(), "X");
  const int64_t rank = x.rank();
  if (rank < 3 || rank > 5) {
    return Unsupported(
        ctx.Error("Conv supports 1-D to 3-D inputs [N, C, d1..d3], got X " + ShapeToString(x.shape())).message());
  }
  if (w.rank() != rank) {
    return ctx.Error("W " + ShapeToString(w.shape()) + " must have the rank of X " + ShapeToString(x.shape()));
  }
  const int64_t group = ctx.node->GetInt("group", 1);
  const int64_t n = x.dim(0), c = x.dim(1), m = w.dim(0);
  if (group <= 0 || c % group != 0 || m % group != 0 || w.dim(1) != c / group) {
    return ctx.Error("channels do not match: X " + ShapeToString(x.shape()) + ", W " + ShapeToString(w.shape()) +
                     ", group " + std::to_string(group) + " (W.dim(1) must be C / group)");
  }
  if (bias != nullptr && bias->numel() != m) {
    return ctx.Error("B " + ShapeToString(bias->shape()) + " must have M = " + std::to_string(m) + " entries");
  }
  const std::vector<int64_t> in(x.shape().begin() + 2, x.shape().end());
  const std::vector<int64_t> wk(w.shape().begin() + 2, w.shape().end());
  MEMOPT_ASSIGN_OR_RETURN(WindowGeometry g, ForwardWindow(ctx, in, wk, false));
  if (g.kernel != wk) {
    return ctx.Error("kernel_shape " + ShapeToString(g.kernel) + " differs from W's spatial dims " + ShapeToString(wk));
  }
  const Window3 win = MakeWindow3(in, g.out, g.kernel, g.strides, g.dilations, g.pads);
  std::vector<int64_t> out_shape = {n, m};
  out_shape.insert(out_shape.end(), g.out.begin(), g.out.end());
  ctx.outputs[0] = Tensor::Uninitialized(x.dtype(), out_shape);  // every image and group is a product
  Tensor& y = ctx.outputs[0];

  return DispatchCompute(ctx, x.dtype(), [&](auto tag) -> Status {
    using C = typename decltype(tag)::type;
    InView<C> wv(w);
    std::optional<InView<C>> bv;
    if (bias != nullptr) bv.emplace(*bias);
    const int64_t cg = c / group, mg = m / group;
    const int64_t kdim = cg * win.KernelSize();
    const int64_t osize = win.OutSize();
    const int64_t isize = win.InSize();
    const bool direct = win.ReadsImageAsIs();
    // One image: each group's product (through a column matrix unless the window reads the image
    // as it is), the bias added while the image's output is still in cache.
    auto image = [&](const C* xi, C* yi, ColumnBuffer<C>& col) {
      for (int64_t gi = 0; gi < group; ++gi) {
        const C* xg = xi + gi * cg * isize;
        const C* src = xg;
        if (!direct) {
          Im2Col(xg, cg, win, col.data());
          src = col.data();
        }
        C* yg = yi + gi * mg * osize;
        memopt::Gemm(false, false, mg, osize, kdim, C(1), wv.data() + gi * mg * kdim, kdim, src, osize, C(0), yg, osize);
        if (bv) {
          for (int64_t oc = 0; oc < mg; ++oc) {
            const C bval = (*bv)[gi * mg + oc];
            C* yp = yg + oc * osize;
            for (int64_t i = 0; i < osize; ++i) yp[i] += bval;
          }
        }
      }
    };
    const int64_t cost = group * mg * osize * kdim;
    if (StoredAs<C>(x)) {  // float/double: images read and written in place
      const C* xp = x.data<C>();
      C* yp = y.data<C>();
      if constexpr (std::is_same_v<C, float>) {
        if (DirectConvApplies(win)) {  // unit strides, more than one tap: no column matrix (conv_direct.h)
          DirectConv2D(xp, wv.data(), bv ? bv->data() : nullptr, n, c, m, group, win, yp);
          return Status::Ok();
        }
      }
      // Images on the pool's threads at once, each range with its own column scratch; a single
      // image parallelises inside Im2Col and Gemm instead.
      ParallelFor(n, cost, [&](int64_t first, int64_t last) {
        ColumnBuffer<C> col(direct ? 0 : kdim * osize);
        for (int64_t img = first; img < last; ++img) image(xp + img * c * isize, yp + img * m * osize, col);
      });
      return Status::Ok();
    }
    // float16/bfloat16: an image converted, computed and stored at a time, not the whole batch.
    ParallelFor(n, cost, [&](int64_t first, int64_t last) {
      ColumnBuffer<C> col(direct ? 0 : kdim * osize);
      ChunkBuffers<C> buf;
      for (int64_t img = first; img < last; ++img) {
        const C* xi = ReadRange(x, img * c * isize, c * isize, buf.Get(0, static_cast<size_t>(c * isize)));
        C* yi = buf.Get(1, static_cast<size_t>(m * osize));
        bool done = false;
        if constexpr (std::is_same_v<C, float>) {
          if (DirectConvApplies(win)) {
            DirectConv2D(xi, wv.data(), bv ? bv->data() : nullptr, 1, c, m, group, win, yi);
            done = true;
          }
        }
        if (!done) image(xi, yi, col);
        StoreRange(yi, m * osize, y, img * m * osize);
      }
    });
    return Status::Ok();
  });
}

}  // namespace

static void RegisterConvKernels(OpRegistry& r) { r.SetCpuKernel("", "Conv", Conv, FloatTypes()); }

}  // namespace memopt::math

MEMOPT_OPS(conv, conv_cpu) {
  memopt::math::RegisterConvKernels(ops);
}
