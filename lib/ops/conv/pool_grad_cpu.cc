// Pooling and convolution gradients (ort_training_ops.md 3.22, 3.23): MaxPoolGrad and
// AveragePoolGrad ("" domain, since 9) and com.microsoft ConvGrad. Layout NC[spatial...].
//
// Pool gradients do not receive X, so dX's shape comes, as in ORT, from the statically inferred
// shape of the node's output (KernelContext::graph): literal dims are taken as they are, N and C
// from dY, and any other unknown spatial dim is the smallest input size that the pooling
// attributes map onto dY's size (exact for stride 1 and for inputs the windows tile exactly).
#include <algorithm>
#include <string>
#include <vector>

#include "exec/kernels/block_sum.h"
#include "exec/kernels/conv_direct.h"
#include "exec/kernels/float_range.h"
#include "exec/kernels/im2col.h"
#include "exec/kernels/kernel_util.h"
#include "exec/kernels/training_util.h"
#include "exec/kernels/transposed_conv.h"
#include "ir/graph.h"
#include "ir/op_registry.h"

namespace memopt::training {
namespace {

struct Geometry {
  std::vector<int64_t> in, out, kernel, strides, dilations, pad_begin, pad_end;
};

/// Reads kernel_shape/strides/dilations/pads; pads from auto_pad when `in` is known.
Expected<Geometry> ReadGeometry(const KernelContext& ctx, size_t spatial, const std::vector<int64_t>& kernel) {
  Geometry g;
  g.kernel = kernel;
  if (g.kernel.size() != spatial) {
    return ctx.Error("kernel_shape has " + std::to_string(g.kernel.size()) + " dims for " + std::to_string(spatial) +
                     " spatial dims");
  }
  g.strides = ctx.node->GetInts("strides");
  if (g.strides.empty()) g.strides.assign(spatial, 1);
  g.dilations = ctx.node->GetInts("dilations");
  if (g.dilations.empty()) g.dilations.assign(spatial, 1);
  std::vector<int64_t> pads = ctx.node->GetInts("pads");
  if (pads.empty()) pads.assign(2 * spatial, 0);
  if (g.strides.size() != spatial || g.dilations.size() != spatial || pads.size() != 2 * spatial) {
    return ctx.Error("strides, dilations and pads must match the " + std::to_string(spatial) + " spatial dims");
  }
  for (size_t i = 0; i < spatial; ++i) {
    if (g.strides[i] <= 0 || g.dilations[i] <= 0 || g.kernel[i] <= 0) {
      return ctx.Error("kernel_shape, strides and dilations must be positive");
    }
  }
  g.pad_begin.assign(pads.begin(), pads.begin() + static_cast<std::ptrdiff_t>(spatial));
  g.pad_end.assign(pads.begin() + static_cast<std::ptrdiff_t>(spatial), pads.end());
  return g;
}

int64_t Extent(const Geometry& g, size_t i) { return (g.kernel[i] - 1) * g.dilations[i] + 1; }

/// Sets pad_begin/pad_end for auto_pad SAME_UPPER/SAME_LOWER/VALID once g.in and g.out are known.
void ApplyAutoPad(const std::string& auto_pad, Geometry& g) {
  if (auto_pad == "VALID") {
    std::fill(g.pad_begin.begin(), g.pad_begin.end(), 0);
    std::fill(g.pad_end.begin(), g.pad_end.end(), 0);
  } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    for (size_t i = 0; i < g.in.size(); ++i) {
      const int64_t total = std::max<int64_t>(0, (g.out[i] - 1) * g.strides[i] + Extent(g, i) - g.in[i]);
      const int64_t small = total / 2, large = total - small;
      g.pad_begin[i] = auto_pad == "SAME_UPPER" ? small : large;
      g.pad_end[i] = total - g.pad_begin[i];
    }
  }
}

/// dX's shape for a pool gradient (see the file comment).
Expected<std::vector<int64_t>> PoolInputShape(const KernelContext& ctx, const Tensor& dy, Geometry& g) {
  const int64_t rank = dy.rank();
  std::vector<int64_t> shape(static_cast<size_t>(rank), -1);
  shape[0] = dy.dim(0);
  shape[1] = dy.dim(1);
  if (ctx.graph != nullptr && ctx.node->outputs[0] != kNone) {
    const TensorInfo& info = ctx.graph->value(ctx.node->outputs[0]).info;
    if (info.shape.has_value() && static_cast<int64_t>(info.shape->size()) == rank) {
      for (int64_t d = 2; d < rank; ++d) {
        if (auto v = (*info.shape)[static_cast<size_t>(d)].AsInt()) shape[static_cast<size_t>(d)] = *v;
      }
    }
  }
  const std::string auto_pad = ctx.node->GetString("auto_pad", "NOTSET");
  for (int64_t d = 2; d < rank; ++d) {
    const size_t i = static_cast<size_t>(d - 2);
    int64_t& s = shape[static_cast<size_t>(d)];
    if (s >= 0) continue;
    const int64_t out = dy.dim(d);
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      s = (out - 1) * g.strides[i] + 1;
    } else if (auto_pad == "VALID") {
      s = (out - 1) * g.strides[i] + Extent(g, i);
    } else {
      s = std::max<int64_t>(1, (out - 1) * g.strides[i] + Extent(g, i) - g.pad_begin[i] - g.pad_end[i]);
    }
  }
  g.in.assign(shape.begin() + 2, shape.end());
  g.out.assign(dy.shape().begin() + 2, dy.shape().end());
  ApplyAutoPad(auto_pad, g);
  return shape;
}

// MaxPoolGrad(dY, Indices): dX.flat[Indices.flat[i]] += dY.flat[i].
Status MaxPoolGradKernel(KernelContext& ctx) {
  MEMOPT_RETURN_IF_ERROR(RequireFloatInput(ctx, 0, "dY"));
  MEMOPT_RETURN_IF_ERROR(RequireInput(ctx, 1, "Indices"));
  const Tensor& dy = ctx.input(0);
  const Tensor& indices = ctx.input(1);
  if (dy.rank() < 3 || indices.numel() != dy.numel()) {
    return ctx.Error("dY " + dy.Describe() + " must be N,C,spatial... with one index per element (Indices " +
                     indices.Describe() + ")");
  }
  MEMOPT_ASSIGN_OR_RETURN(Geometry g,
                          ReadGeometry(ctx, static_cast<size_t>(dy.rank() - 2), ctx.node->GetInts("kernel_shape")));
  MEMOPT_ASSIGN_OR_RETURN(std::vector<int64_t> shape, PoolInputShape(ctx, dy, g));
  const int64_t total = NumElements(shape);
  std::vector<int64_t> converted;  // int32 indices, widened
  if (indices.dtype() != DataType::kInt64) converted = ReadIndices(indices);
  const int64_t* idx = converted.empty() ? indices.data<int64_t>() : converted.data();
  // MaxPool's indices point into the (image, channel) plane of their own output element; then
  // the planes are checked, zeroed and scattered on the pool's threads.
  const int64_t planes = dy.dim(0) * dy.dim(1);
  const int64_t in_plane = planes > 0 ? total / planes : 0, out_plane = planes > 0 ? dy.numel() / planes : 0;
  bool within_planes = planes > 0 && in_plane * planes == total && out_plane * planes == dy.numel();
  if (within_planes) {
    std::vector<char> inside(static_cast<size_t>(planes));
    ParallelFor(planes, out_plane, [&](int64_t first, int64_t last) {
      for (int64_t p = first; p < last; ++p) {
        const int64_t lo = p * in_plane, hi = lo + in_plane;
        bool in = true;
        for (int64_t i = p * out_plane; i < (p + 1) * out_plane; ++i) in &= (idx[i] >= lo) & (idx[i] < hi);
        inside[static_cast<size_t>(p)] = in;
      }
    });
    within_planes = std::all_of(inside.begin(), inside.end(), [](char c) { return c != 0; });
  }
  if (!within_planes) {
    for (int64_t i = 0; i < indices.numel(); ++i) {
      if (idx[i] < 0 || idx[i] >= total) {
        return ctx.Error("index " + std::to_string(idx[i]) + " is outside X " + ShapeToString(shape) +
                         " (give the graph a static X shape when the pooling windows do not tile X exactly)");
      }
    }
  }
  ctx.outputs[0] = Tensor::Uninitialized(dy.dtype(), shape);  // every part zeroes its range first
  return DispatchCompute(ctx, dy.dtype(), [&]<typename C>() -> Status {
    Tensor& dx = ctx.outputs[0];
    // Planes in parallel when each scatters into its own; otherwise one range on this thread.
    // 16-bit planes are converted and stored a plane at a time.
    const int64_t parts = within_planes ? planes : 1, part = within_planes ? out_plane : dy.numel();
    const int64_t zeroed = within_planes ? in_plane : total;
    ParallelFor(parts, part + zeroed, [&](int64_t first, int64_t last) {
      ChunkBuffers<C> buf;
      for (int64_t q = first; q < last; ++q) {
        const C* gy = ReadRange(dy, q * part, part, buf, 0);
        C* dxq = WriteRange(dx, q * zeroed, zeroed, buf, 1);
        std::fill(dxq, dxq + zeroed, C(0));
        const int64_t* iq = idx + q * part;
        for (int64_t i = 0; i < part; ++i) dxq[iq[i] - q * zeroed] += gy[i];
        CommitRange(dxq, zeroed, dx, q * zeroed);
      }
    });
    return Status::Ok();
  });
}

/// For every output position and kernel tap, the input spatial offset or -1 when it falls in the
/// padding. Also the padded-window cell count per output position (for count_include_pad).
struct TapTable {
  int64_t out_size = 0, taps = 0;
  std::vector<int64_t> offset;   // [out_size * taps]
  std::vector<int64_t> padded;   // [out_size]: taps inside [-pad_begin, in + pad_end)
};

/// Advances a row-major multi-index over `dims` (wraps to all zeros after the last one).
void Advance(std::vector<int64_t>& index, const std::vector<int64_t>& dims) {
  for (int64_t i = static_cast<int64_t>(dims.size()) - 1; i >= 0; --i) {
    const size_t k = static_cast<size_t>(i);
    if (++index[k] < dims[k]) return;
    index[k] = 0;
  }
}

TapTable BuildTaps(const Geometry& g) {
  TapTable t;
  const size_t n = g.in.size();
  t.out_size = 1;
  t.taps = 1;
  for (size_t i = 0; i < n; ++i) {
    t.out_size *= g.out[i];
    t.taps *= g.kernel[i];
  }
  t.offset.assign(static_cast<size_t>(t.out_size * t.taps), -1);
  t.padded.assign(static_cast<size_t>(t.out_size), 0);
  std::vector<int64_t> o = g.out, k = g.kernel;  // multi-indices, zeroed below
  std::fill(o.begin(), o.end(), 0);
  std::fill(k.begin(), k.end(), 0);
  for (int64_t oi = 0; oi < t.out_size; ++oi) {
    for (int64_t ki = 0; ki < t.taps; ++ki) {
      int64_t off = 0;
      bool inside = true, in_pad = true;
      for (size_t i = 0; i < n; ++i) {
        const int64_t p = o[i] * g.strides[i] - g.pad_begin[i] + k[i] * g.dilations[i];
        if (p < 0 || p >= g.in[i]) inside = false;
        if (p < -g.pad_begin[i] || p >= g.in[i] + g.pad_end[i]) in_pad = false;
        off = off * g.in[i] + p;
      }
      if (inside) t.offset[static_cast<size_t>(oi * t.taps + ki)] = off;
      if (in_pad) ++t.padded[static_cast<size_t>(oi)];
      Advance(k, g.kernel);
    }
    Advance(o, g.out);
  }
  return t;
}

/// One plane of AveragePoolGrad: each dY cell / count added to every input cell of its window.
template <typename C>
void AveragePlaneGrad(const TapTable& t, bool include_pad, const C* gy, C* xp) {
  for (int64_t oi = 0; oi < t.out_size; ++oi) {
    const int64_t* offs = t.offset.data() + oi * t.taps;
    int64_t count = 0;
    if (include_pad) {
      count = t.padded[static_cast<size_t>(oi)];
    } else {
      for (int64_t ki = 0; ki < t.taps; ++ki) count += offs[ki] >= 0 ? 1 : 0;
    }
    if (count == 0) continue;
    const C v = gy[oi] / static_cast<C>(count);
    for (int64_t ki = 0; ki < t.taps; ++ki) {
      if (offs[ki] >= 0) xp[offs[ki]] += v;
    }
  }
}

// AveragePoolGrad(dY): each dY cell / count is added to every input cell of its window.
Status AveragePoolGradKernel(KernelContext& ctx) {
  MEMOPT_RETURN_IF_ERROR(RequireFloatInput(ctx, 0, "dY"));
  const Tensor& dy = ctx.input(0);
  if (dy.rank() < 3) return ctx.Error("dY " + dy.Describe() + " must be N,C,spatial...");
  MEMOPT_ASSIGN_OR_RETURN(Geometry g,
                          ReadGeometry(ctx, static_cast<size_t>(dy.rank() - 2), ctx.node->GetInts("kernel_shape")));
  MEMOPT_ASSIGN_OR_RETURN(std::vector<int64_t> shape, PoolInputShape(ctx, dy, g));
  const bool include_pad = ctx.node->GetInt("count_include_pad", 0) != 0;
  const TapTable t = BuildTaps(g);
  const int64_t planes = dy.dim(0) * dy.dim(1), in_size = ShapeProduct(shape, 2, dy.rank());
  ctx.outputs[0] = Tensor::Uninitialized(dy.dtype(), shape);  // every plane is zeroed first
  return DispatchCompute(ctx, dy.dtype(), [&]<typename C>() -> Status {
    Tensor& dx = ctx.outputs[0];
    // Planes in parallel, each into its own part of dX (16-bit planes converted one at a time).
    ParallelFor(planes, t.out_size * t.taps + in_size, [&](int64_t first, int64_t last) {
      ChunkBuffers<C> buf;
      for (int64_t p = first; p < last; ++p) {
        const C* gy = ReadRange(dy, p * t.out_size, t.out_size, buf, 0);
        C* xp = WriteRange(dx, p * in_size, in_size, buf, 1);
        std::fill(xp, xp + in_size, C(0));
        AveragePlaneGrad(t, include_pad, gy, xp);
        CommitRange(xp, in_size, dx, p * in_size);
      }
    });
    return Status::Ok();
  });
}

/// Slices of the images whose weight gradients ConvGrad sums separately, then in order.
constexpr int64_t kDwSlices = 8;
/// The slices' partial sums hold at most this many bytes; larger weights take one slice, whose
/// im2col and products run on the threads themselves (a 512 x 512 3x3 layer's 7 partials would
/// hold 66 MB).
constexpr int64_t kDwPartialBytes = int64_t{16} << 20;

// ConvGrad(dY, X, W) -> dX?, dW?, dB? with the forward Conv's attributes (group, pads, strides,
// dilations, auto_pad). Per image and group, with col = im2col(X_g) [C/g * k, out]:
//   dW_g += dY_g col^T      dX_g = col2im(W_g^T dY_g)      dB = sum of dY over images and positions.
Status ConvGradKernel(KernelContext& ctx) {
  MEMOPT_RETURN_IF_ERROR(RequireFloatInput(ctx, 0, "dY"));
  MEMOPT_RETURN_IF_ERROR(RequireFloatInput(ctx, 1, "X"));
  MEMOPT_RETURN_IF_ERROR(RequireFloatInput(ctx, 2, "W"));
  const Tensor& dy = ctx.input(0);
  const Tensor& x = ctx.input(1);
  const Tensor& w = ctx.input(2);
  const int64_t rank = x.rank();
  if (rank < 3 || rank > 5 || dy.rank() != rank || w.rank() != rank) {
    return ctx.Error("dY " + dy.Describe() + ", X " + x.Describe() + " and W " + w.Describe() +
                     " must all be N,C,spatial... of the same rank (1 to 3 spatial dims)");
  }
  const int64_t group = ctx.node->GetInt("group", 1);
  const int64_t n = x.dim(0), c_in = x.dim(1), m_out = w.dim(0), c_per_group = w.dim(1);
  if (group <= 0 || c_in != c_per_group * group || m_out % group != 0 || dy.dim(1) != m_out || dy.dim(0) != n) {
    return ctx.Error("channels of X " + x.Describe() + ", W " + w.Describe() + " and dY " + dy.Describe() +
                     " do not match group " + std::to_string(group));
  }
  std::vector<int64_t> kernel = ctx.node->GetInts("kernel_shape");
  if (kernel.empty()) kernel.assign(w.shape().begin() + 2, w.shape().end());
  if (!std::equal(kernel.begin(), kernel.end(), w.shape().begin() + 2, w.shape().end())) {
    return ctx.Error("kernel_shape " + ShapeToString(kernel) + " differs from W's spatial dims " + w.Describe());
  }
  MEMOPT_ASSIGN_OR_RETURN(Geometry g, ReadGeometry(ctx, static_cast<size_t>(rank - 2), kernel));
  g.in.assign(x.shape().begin() + 2, x.shape().end());
  g.out.assign(dy.shape().begin() + 2, dy.shape().end());
  ApplyAutoPad(ctx.node->GetString("auto_pad", "NOTSET"), g);
  const math::Window3 win = math::MakeWindow3(g.in, g.out, g.kernel, g.strides, g.dilations, g.pad_begin);
  const bool want_dx = ctx.output_wanted(0), want_dw = ctx.output_wanted(1), want_db = ctx.output_wanted(2);
  // Unit strides: dX is a direct convolution of dY that writes every element (conv_direct.h);
  // otherwise the transposed convolution adds into a zeroed dX. The direct path computes in float: not for a float64
  // dY, which computes in double (DispatchCompute below).
  const bool dx_direct = x.dtype() == DataType::kFloat && dy.dtype() != DataType::kDouble &&
                         math::DirectConvInputGradWindow(win).has_value();
  if (want_dx) ctx.outputs[0] = dx_direct ? Tensor::Uninitialized(x.dtype(), x.shape()) : Tensor(x.dtype(), x.shape());
  if (want_dw) ctx.outputs[1] = Tensor(w.dtype(), w.shape());
  if (want_db) ctx.outputs[2] = Tensor(dy.dtype(), {m_out});
  return DispatchCompute(ctx, dy.dtype(), [&]<typename C>() -> Status {
    // W whole (a parameter); for dW, X a group's channels and dY a tile at a time, so 16-bit
    // activations are never converted whole.
    InView<C> wt(w);
    const int64_t mg = m_out / group, osize = win.OutSize(), isize = win.InSize();
    const int64_t kdim = c_per_group * win.KernelSize();
    const bool direct = win.ReadsImageAsIs();
    // Column matrices a tile of output positions at a time (im2col.h): about 1 MiB of scratch per
    // thread, not kdim x osize (18 MiB for 3x3 over 128 channels of 64x64).
    const int64_t tile = direct ? osize : math::ColumnTilePositions(win, kdim, sizeof(C));
    if (want_dx && dx_direct) {
      if constexpr (std::is_same_v<C, float>) {
        InView<C> gy(dy);  // float X: dY is float too but for a mixed-type graph
        math::DirectConvInputGrad(gy.data(), wt.data(), n, c_in, m_out, group, win, ctx.outputs[0].data<float>());
      }
    } else if (want_dx) {
      // dX is the transposed convolution of dY with W as it is (transposed_conv.h), added into
      // the zeroed dX (a 16-bit dX is written whole).
      math::TransposedConv(dy, wt.data(), static_cast<const C*>(nullptr), group, win, ctx.outputs[0]);
    }
    if (want_dw && n > 0) {
      // dW = sum over images of dY_b col_b^T. The images are cut into a fixed number of slices
      // (claimed by the threads in turn); each slice sums its images into its own partial (slice 0
      // into dW), and the partials are added in slice order, so the result depends neither on the
      // thread count nor on timing. Weights whose partials would pass kDwPartialBytes take one
      // slice (a ParallelFor of one item runs inline: its im2col and products use the threads).
      OutView<C> dw(ctx.outputs[1]);
      const int64_t wsize = m_out * kdim;
      int64_t slices = std::min<int64_t>(n, kDwSlices);
      if ((slices - 1) * wsize * static_cast<int64_t>(sizeof(C)) > kDwPartialBytes) slices = 1;
      std::vector<std::vector<C>> partial(static_cast<size_t>(slices - 1), std::vector<C>(static_cast<size_t>(wsize)));
      ParallelFor(slices, (n / slices) * group * mg * kdim * osize, [&](int64_t s0, int64_t s1) {
        math::ColumnBuffer<C> col(direct ? 0 : kdim * tile);
        ChunkBuffers<C> buf;
        for (int64_t s = s0; s < s1; ++s) {
          C* out = s == 0 ? dw.data() : partial[static_cast<size_t>(s - 1)].data();
          const int64_t first = n * s / slices, last = n * (s + 1) / slices;
          for (int64_t b = first; b < last; ++b) {
            for (int64_t gi = 0; gi < group; ++gi) {
              // X a group's channels at a time (im2col reads around each position), dY a tile.
              const int64_t x_at = (b * c_in + gi * c_per_group) * isize, dy_at = (b * m_out + gi * mg) * osize;
              const C* xg = ReadRange(x, x_at, c_per_group * isize, buf, 0);
              C* dwg = out + gi * mg * kdim;
              math::ForEachTile(win, tile, [&](math::PositionRange r) {
                const BlockView<C> dyt = ReadBlock(dy, dy_at + r.begin, mg, osize, r.size(), buf, 1);  // [M/g, tile]
                const C* src = xg + r.begin;  // a 1x1 window reads the image as its column matrix
                int64_t lds = isize;
                if (!direct) {
                  math::Im2Col(xg, c_per_group, win, col.data(), r);
                  src = col.data();
                  lds = r.size();
                }
                const C beta = b == first && r.begin == 0 ? C(0) : C(1);
                Gemm(false, true, mg, kdim, r.size(), C(1), dyt.data, dyt.ld, src, lds, beta, dwg, kdim);
              });
            }
          }
        }
      });
      for (const std::vector<C>& p : partial) {
        for (int64_t i = 0; i < wsize; ++i) dw.data()[i] += p[static_cast<size_t>(i)];
      }
    }
    if (want_db) {
      std::vector<double> db(static_cast<size_t>(m_out), 0.0);
      ParallelFor(m_out, n * osize, [&](int64_t m0, int64_t m1) {
        std::vector<C> plane(static_cast<size_t>(osize));
        for (int64_t m = m0; m < m1; ++m) {
          double total = 0;
          for (int64_t b = 0; b < n; ++b) {
            total += SumOf(ReadRange(dy, (b * m_out + m) * osize, osize, plane.data()), osize);
          }
          db[static_cast<size_t>(m)] = total;
        }
      });
      StoreFromCompute(db.data(), ctx.outputs[2]);
    }
    return Status::Ok();
  });
}

}  // namespace

static void RegisterPoolGradKernels(OpRegistry& r) {
  const auto types = FloatTypes();
  r.SetCpuKernel("", "MaxPoolGrad", MaxPoolGradKernel, types);
  r.SetCpuKernel("", "AveragePoolGrad", AveragePoolGradKernel, types);
  r.SetCpuKernel(kMsDomain, "ConvGrad", ConvGradKernel, types);
  r.SetCpuKernel("", "ConvGrad", ConvGradKernel, types);  // older ORT registered it in the ONNX domain (v9)
}

}  // namespace memopt::training

MEMOPT_OPS(conv, pool_grad_cpu) {
  memopt::training::RegisterPoolGradKernels(ops);
}
