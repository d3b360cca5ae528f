// Conv (1-D/2-D/3-D, group, strides, dilations, pads, auto_pad). Unit-stride 1-D/2-D windows of
// more than one tap in float run the direct kernel (conv_direct.h), 1x1 windows one GEMM per image
// and group; the rest im2col and one GEMM  Y_g[M/g, tile] = W_g[M/g, C/g * k] * col[C/g * k, tile]
// per image, group and tile of output positions, the bias added after it; all in parallel.
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
    const int64_t cost = group * mg * osize * kdim;  // per image
    const auto add_bias = [&](C* row, int64_t oc, int64_t len) {
      if (!bv) return;
      const C bval = (*bv)[oc];
      for (int64_t i = 0; i < len; ++i) row[i] += bval;
    };
    if constexpr (std::is_same_v<C, float>) {
      if (DirectConvApplies(win)) {  // unit strides, more than one tap: no column matrix (conv_direct.h)
        const float* bp = bv ? bv->data() : nullptr;
        if (StoredAs<C>(x)) {
          DirectConv2D(x.data<float>(), wv.data(), bp, n, c, m, group, win, y.data<float>());
          return Status::Ok();
        }
        // float16/bfloat16: an image converted, computed and stored at a time.
        ParallelFor(n, cost, [&](int64_t first, int64_t last) {
          ChunkBuffers<C> buf;
          for (int64_t img = first; img < last; ++img) {
            const C* xi = ReadRange(x, img * c * isize, c * isize, buf, 0);
            C* yi = buf.Get(1, static_cast<size_t>(m * osize));
            DirectConv2D(xi, wv.data(), bp, 1, c, m, group, win, yi);
            StoreRange(yi, m * osize, y, img * m * osize);
          }
        });
        return Status::Ok();
      }
    }
    if (win.ReadsImageAsIs()) {  // 1x1, unit strides, no pads: the image is its own column matrix
      ParallelFor(n, cost, [&](int64_t first, int64_t last) {
        ChunkBuffers<C> buf;
        for (int64_t img = first; img < last; ++img) {
          const C* xi = ReadRange(x, img * c * isize, c * isize, buf, 0);
          C* yi = WriteRange(y, img * m * osize, m * osize, buf, 1);
          for (int64_t gi = 0; gi < group; ++gi) {
            C* yg = yi + gi * mg * osize;
            memopt::Gemm(false, false, mg, osize, kdim, C(1), wv.data() + gi * mg * kdim, kdim, xi + gi * cg * isize,
                         osize, C(0), yg, osize);
            for (int64_t oc = 0; oc < mg; ++oc) add_bias(yg + oc * osize, gi * mg + oc, osize);
          }
          CommitRange(yi, m * osize, y, img * m * osize);
        }
      });
      return Status::Ok();
    }
    // The rest through a column matrix a tile of output positions at a time (im2col.h: about
    // 1 MiB of scratch per thread whatever the image). Each (image, group, tile) is one item of
    // work and one BLAS call, so one image's tiles run in parallel too, and no product is cut
    // into blocks that would each re-pack the weights or the column tile (GemmAmong: but for a
    // few items, whose products are cut on the threads).
    const int64_t tile = ColumnTilePositions(win, kdim, sizeof(C));
    const int64_t tiles = (osize + tile - 1) / tile;
    const bool in_place = StoredAs<C>(y);
    ParallelFor(n * group * tiles, mg * tile * kdim, [&](int64_t first, int64_t last) {
      ColumnBuffer<C> col(kdim * tile);
      ChunkBuffers<C> buf;
      for (int64_t item = first; item < last; ++item) {
        const int64_t t = item % tiles, gi = item / tiles % group, img = item / tiles / group;
        const PositionRange r{t * tile, std::min(osize, (t + 1) * tile)};
        const int64_t x_at = (img * c + gi * cg) * isize, y_at = (img * m + gi * mg) * osize;
        Im2Col(ReadRange(x, x_at, cg * isize, buf, 0), cg, win, col.data(), r);
        // float/double outputs are written in place; 16-bit ones through an [M/g, tile] buffer.
        const int64_t ld = in_place ? osize : r.size();
        C* out = in_place ? y.data<C>() + y_at + r.begin : buf.Get(1, static_cast<size_t>(mg * r.size()));
        GemmAmong(n * group * tiles, false, false, mg, r.size(), kdim, C(1), wv.data() + gi * mg * kdim, kdim,
                  col.data(), r.size(), C(0), out, ld);
        for (int64_t oc = 0; oc < mg; ++oc) {
          add_bias(out + oc * ld, gi * mg + oc, r.size());
          if (!in_place) StoreRange(out + oc * ld, r.size(), y, y_at + oc * osize + r.begin);
        }
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
