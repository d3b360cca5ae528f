// MaxPool (with Indices, storage_order, dilations, ceil_mode), AveragePool (count_include_pad),
// LpPool, GlobalAveragePool, GlobalMaxPool, GlobalLpPool. Spatial dims 1..3.
#include <algorithm>
#include <cmath>
#include <vector>
#include <limits>

#include "exec/kernels/block_sum.h"
#include "exec/kernels/float_range.h"
#include "exec/kernels/math_util.h"
#include "ir/op_registry.h"

namespace memopt::math {
namespace {

/// Window geometry padded to 3 spatial dims, plus end pads (for count_include_pad).
struct Pool3 {
  int64_t in[3] = {1, 1, 1};
  int64_t out[3] = {1, 1, 1};
  int64_t kernel[3] = {1, 1, 1};
  int64_t stride[3] = {1, 1, 1};
  int64_t dilation[3] = {1, 1, 1};
  int64_t pad_begin[3] = {0, 0, 0};
  int64_t pad_end[3] = {0, 0, 0};
  int64_t planes = 0;  ///< N * C
  int64_t InSize() const { return in[0] * in[1] * in[2]; }
  int64_t OutSize() const { return out[0] * out[1] * out[2]; }
};

Expected<Pool3> Prepare(KernelContext& ctx, DataType out_dtype) {
  const Tensor& x = ctx.input(0);
  if (x.rank() < 3 || x.rank() > 5) {
    return Unsupported(
        ctx.Error("pooling supports 1-D to 3-D inputs [N, C, d1..d3], got X " + ShapeToString(x.shape())).message());
  }
  const std::vector<int64_t> in(x.shape().begin() + 2, x.shape().end());
  const bool ceil_mode = ctx.node->GetInt("ceil_mode", 0) != 0;
  MEMOPT_ASSIGN_OR_RETURN(WindowGeometry g, ForwardWindow(ctx, in, {}, ceil_mode));
  Pool3 p;
  const size_t sd = in.size(), off = 3 - sd;
  for (size_t i = 0; i < sd; ++i) {
    p.in[off + i] = in[i];
    p.out[off + i] = g.out[i];
    p.kernel[off + i] = g.kernel[i];
    p.stride[off + i] = g.strides[i];
    p.dilation[off + i] = g.dilations[i];
    p.pad_begin[off + i] = g.pads[i];
    p.pad_end[off + i] = g.pads[i + sd];
  }
  p.planes = x.dim(0) * x.dim(1);
  std::vector<int64_t> out_shape = {x.dim(0), x.dim(1)};
  out_shape.insert(out_shape.end(), g.out.begin(), g.out.end());
  // Every pooling kernel writes each output position (and each index) once.
  ctx.outputs[0] = Tensor::Uninitialized(out_dtype, out_shape);
  if (ctx.output_wanted(1)) ctx.outputs[1] = Tensor::Uninitialized(DataType::kInt64, out_shape);
  return p;
}

/// Calls visit(in_offset_within_plane, d, h, w) for every in-image position of the window of
/// output position (od, oh, ow); returns the number of positions inside the padded extent.
template <typename Visit>
int64_t ForWindow(const Pool3& p, int64_t od, int64_t oh, int64_t ow, Visit&& visit) {
  int64_t padded = 1;
  int64_t start[3] = {od * p.stride[0] - p.pad_begin[0], oh * p.stride[1] - p.pad_begin[1],
                      ow * p.stride[2] - p.pad_begin[2]};
  for (int i = 0; i < 3; ++i) {
    int64_t cnt = 0;
    for (int64_t k = 0; k < p.kernel[i]; ++k) {
      const int64_t pos = start[i] + k * p.dilation[i];
      if (pos >= -p.pad_begin[i] && pos < p.in[i] + p.pad_end[i]) ++cnt;
    }
    padded *= cnt;
  }
  for (int64_t kd = 0; kd < p.kernel[0]; ++kd) {
    const int64_t id = start[0] + kd * p.dilation[0];
    if (id < 0 || id >= p.in[0]) continue;
    for (int64_t kh = 0; kh < p.kernel[1]; ++kh) {
      const int64_t ih = start[1] + kh * p.dilation[1];
      if (ih < 0 || ih >= p.in[1]) continue;
      for (int64_t kw = 0; kw < p.kernel[2]; ++kw) {
        const int64_t iw = start[2] + kw * p.dilation[2];
        if (iw < 0 || iw >= p.in[2]) continue;
        visit((id * p.in[1] + ih) * p.in[2] + iw, id, ih, iw);
      }
    }
  }
  return padded;
}

/// Every output position, planes in parallel, each plane of x read as C and of y written as C
/// (16-bit planes converted and stored one at a time): output o of a plane = fn(x plane, od, oh, ow).
template <typename C, typename Fn>
void MapPlanes(const Pool3& p, const Tensor& x, Tensor& y, Fn&& fn) {
  const int64_t osize = p.OutSize(), isize = p.InSize();
  const int64_t ksize = p.kernel[0] * p.kernel[1] * p.kernel[2];
  ParallelFor(p.planes, osize * ksize, [&](int64_t begin, int64_t end) {
    ChunkBuffers<C> buf;
    for (int64_t plane = begin; plane < end; ++plane) {
      const C* xs = ReadRange(x, plane * isize, isize, buf, 0);
      C* ys = WriteRange(y, plane * osize, osize, buf, 1);
      int64_t o = 0;
      for (int64_t od = 0; od < p.out[0]; ++od)
        for (int64_t oh = 0; oh < p.out[1]; ++oh)
          for (int64_t ow = 0; ow < p.out[2]; ++ow) ys[o++] = fn(xs, od, oh, ow);
      CommitRange(ys, osize, y, plane * osize);
    }
  });
}

/// The in-image taps [first, last) along one dim of the window at output position o: clamped to
/// the image instead of tested tap by tap.
struct TapRange {
  int64_t first = 0, last = 0, start = 0;
};
TapRange Taps(const Pool3& p, int dim, int64_t o) {
  TapRange r;
  r.start = o * p.stride[dim] - p.pad_begin[dim];
  const int64_t dil = p.dilation[dim];
  r.first = r.start >= 0 ? 0 : (-r.start + dil - 1) / dil;
  const int64_t past = p.in[dim] - r.start;  // taps with start + k * dil < in
  r.last = past <= 0 ? 0 : std::min(p.kernel[dim], (past + dil - 1) / dil);
  return r;
}

/// The running maximum with NaN winning: v replaces best when larger or NaN.
template <typename C>
inline C MaxNanWins(C best, C v) {
  if constexpr (std::is_floating_point_v<C>) {
    const C larger = v > best ? v : best;  // two plain selects, which vectorise as max and blend
    return v != v ? v : larger;
  } else {
    return v > best ? v : best;
  }
}

/// best[ow] = max(best[ow], row[ow * stride + shift]) for ow in [lo, hi); kStride > 0 fixes the
/// stride at compile time (1 and 2, the common ones, then vectorise), 0 reads it from `stride`.
template <int64_t kStride, typename C>
void MaxAlongRow(const C* row, int64_t stride, int64_t shift, int64_t lo, int64_t hi, C* best) {
  const int64_t s = kStride > 0 ? kStride : stride;
  for (int64_t ow = lo; ow < hi; ++ow) best[ow] = MaxNanWins(best[ow], row[ow * s + shift]);
}

/// Whether tap value v displaces the running maximum m in a scan in tap order: larger, or the
/// first NaN. Ties keep the earlier tap, as Indices require.
template <typename C>
inline bool Displaces(C v, C m) {
  if constexpr (std::is_floating_point_v<C>) {
    return !(v <= m) & (m == m);  // v > m, or v NaN while m is not
  } else {
    return v > m;
  }
}

/// One row of windows of width KW, stride SW and unit dilation along the row: y[ow] for ow in
/// [0, n) is the maximum (NaN wins) over the window's in-image rows, at plane offsets
/// row_off[0..nrows) in tap order, of columns ow * SW - pad + kw; with `at` (kIndices), at[ow] is
/// the plane offset of the first tap that holds it. Outputs in [lo, hi) have every tap inside the
/// row and run as fixed-width loops that vectorise; the rest check each tap, and get `empty` (and
/// -1) when none is inside.
template <int64_t KW, int64_t SW, bool kIndices, typename C>
void MaxRowOfWindows(const C* plane, const int64_t* row_off, int64_t nrows, int64_t in_w, int64_t pad, int64_t lo,
                     int64_t hi, int64_t n, C start, C empty, C* __restrict y, int32_t* __restrict at) {
  for (int64_t r = 0; r < nrows; ++r) {
    const int64_t first = row_off[r] + lo * SW - pad;  // the first tap of output lo
    const C* __restrict s = plane + first;
    C* __restrict yr = y + lo;
    if constexpr (kIndices) {
      int32_t* __restrict ar = at + lo;
      const auto f = static_cast<int32_t>(first);
      if (r == 0) {  // the row's first tap starts the scan
        for (int32_t i = 0; i < static_cast<int32_t>(hi - lo); ++i) {
          yr[i] = s[i * SW];
          ar[i] = f + i * static_cast<int32_t>(SW);
        }
      }
      for (int32_t kw = r == 0 ? 1 : 0; kw < static_cast<int32_t>(KW); ++kw) {
        for (int32_t i = 0; i < static_cast<int32_t>(hi - lo); ++i) {
          const C v = s[i * SW + kw], m = yr[i];
          const bool take = Displaces(v, m);
          yr[i] = take ? v : m;
          ar[i] = take ? f + i * static_cast<int32_t>(SW) + kw : ar[i];
        }
      }
    } else {
      if (r == 0) std::fill(yr, yr + (hi - lo), start);
      for (int64_t i = 0; i < hi - lo; ++i) {
        C m = yr[i];
        for (int64_t kw = 0; kw < KW; ++kw) m = MaxNanWins(m, s[i * SW + kw]);
        yr[i] = m;
      }
    }
  }
  const auto edge = [&](int64_t ow) {
    C m = empty;
    int32_t b = -1;
    for (int64_t r = 0; r < nrows; ++r) {
      for (int64_t kw = 0; kw < KW; ++kw) {
        const int64_t iw = ow * SW - pad + kw;
        if (iw < 0 || iw >= in_w) continue;
        const C v = plane[row_off[r] + iw];
        if (b < 0 || Displaces(v, m)) {
          m = v;
          b = static_cast<int32_t>(row_off[r] + iw);
        }
      }
    }
    y[ow] = m;
    if constexpr (kIndices) at[ow] = b;
  };
  for (int64_t ow = 0; ow < lo; ++ow) edge(ow);
  for (int64_t ow = hi; ow < n; ++ow) edge(ow);
}

Status MaxPool(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  MEMOPT_ASSIGN_OR_RETURN(Pool3 p, Prepare(ctx, x.dtype()));
  const bool col_major = ctx.node->GetInt("storage_order", 0) != 0;
  int64_t* indices = ctx.outputs.size() > 1 && ctx.outputs[1].defined() ? ctx.outputs[1].data<int64_t>() : nullptr;
  // The in-image taps of every output depth and row, computed once.
  std::vector<TapRange> depth_taps(static_cast<size_t>(p.out[0])), row_taps(static_cast<size_t>(p.out[1]));
  for (int64_t od = 0; od < p.out[0]; ++od) depth_taps[static_cast<size_t>(od)] = Taps(p, 0, od);
  for (int64_t oh = 0; oh < p.out[1]; ++oh) row_taps[static_cast<size_t>(oh)] = Taps(p, 1, oh);
  // Outputs [lo, hi) whose tap kw falls inside the image: 0 <= ow * sw - pad + kw * dil < in.
  const int64_t ow_n = p.out[2], sw = p.stride[2];
  std::vector<std::pair<int64_t, int64_t>> ow_range(static_cast<size_t>(p.kernel[2]));
  std::vector<char> ow_has_tap(static_cast<size_t>(ow_n), 0);
  for (int64_t kw = 0; kw < p.kernel[2]; ++kw) {
    const int64_t shift = kw * p.dilation[2] - p.pad_begin[2];  // iw = ow * sw + shift
    const int64_t lo = shift >= 0 ? 0 : (-shift + sw - 1) / sw;
    const int64_t hi = p.in[2] - shift <= 0 ? 0 : (p.in[2] - shift + sw - 1) / sw;
    ow_range[static_cast<size_t>(kw)] = {std::min(lo, ow_n), std::max(std::min(lo, ow_n), std::min(hi, ow_n))};
    for (int64_t ow = std::min(lo, ow_n); ow < std::min(hi, ow_n); ++ow) ow_has_tap[static_cast<size_t>(ow)] = 1;
  }
  const bool every_ow_has_tap = std::all_of(ow_has_tap.begin(), ow_has_tap.end(), [](char c) { return c != 0; });
  // Outputs whose every tap along the row is inside the image: the intersection of the ranges.
  int64_t inner_lo = 0, inner_hi = ow_n;
  for (const auto& [lo, hi] : ow_range) {
    inner_lo = std::max(inner_lo, lo);
    inner_hi = std::min(inner_hi, hi);
  }
  inner_hi = std::max(inner_lo, inner_hi);
  Status st = DispatchNumeric(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    const T* xp = x.data<T>();
    T* yp = ctx.outputs[0].data<T>();
    const int64_t isize = p.InSize(), osize = p.OutSize();
    constexpr C kStart =
        std::numeric_limits<C>::has_infinity ? -std::numeric_limits<C>::infinity() : std::numeric_limits<C>::lowest();
    constexpr C kEmpty = std::numeric_limits<C>::lowest();  // a window wholly in the padding
    // Per plane and output row (od, oh): the maximum down each image column over the window's
    // rows (kd, kh), then along the row over kw, both passes that vectorise (NaN wins in both, so
    // a window's result is NaN if any tap is, else its largest value). For Indices, the taps in
    // reverse order then mark where each maximum is, so the first tap that holds it (or the
    // first NaN) wins as in a tap-by-tap scan. Positions in the plane are kept as I (32 bits when
    // the plane allows).
    // storage_order = 1: the position within the plane counted column-major.
    const auto ColumnMajor = [&](int64_t b) {
      const int64_t bw = b % p.in[2], bh = (b / p.in[2]) % p.in[1], bd = b / (p.in[2] * p.in[1]);
      return bd + bh * p.in[0] + bw * p.in[0] * p.in[1];
    };
    auto run = [&]<typename I>(I) {
      ParallelFor(p.planes, osize * p.kernel[0] * p.kernel[1] * p.kernel[2], [&](int64_t begin, int64_t end) {
        std::vector<C> best_v(static_cast<size_t>(ow_n));
        std::vector<I> best(static_cast<size_t>(ow_n));
        std::vector<C> column_max(static_cast<size_t>(p.in[2]));
        C* bv = best_v.data();
        C* cm = column_max.data();
        std::vector<int64_t> window_rows(static_cast<size_t>(p.kernel[0] * p.kernel[1]));
        std::vector<int32_t> window_at(static_cast<size_t>(ow_n));
        // The common windows (width 2 or 3, stride 1 or 2, undilated) of a type computed as itself
        // go through a fixed-width row kernel straight into Y (and, for Indices, plane offsets).
        using RowKernel = void (*)(const C*, const int64_t*, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, C, C,
                                   C*, int32_t*);
        RowKernel row_kernel = nullptr;
        if constexpr (std::is_same_v<T, C>) {
          const auto pick = [&]<bool kIndices>(std::bool_constant<kIndices>) -> RowKernel {
            if (p.kernel[2] == 2 && sw == 2) return MaxRowOfWindows<2, 2, kIndices, C>;
            if (p.kernel[2] == 3 && sw == 2) return MaxRowOfWindows<3, 2, kIndices, C>;
            if (p.kernel[2] == 3 && sw == 1) return MaxRowOfWindows<3, 1, kIndices, C>;
            return nullptr;
          };
          if (p.dilation[2] == 1) {
            if (indices == nullptr) {
              row_kernel = pick(std::false_type{});
            } else if (std::is_same_v<I, int32_t>) {
              row_kernel = pick(std::true_type{});
            }
          }
        }
        for (int64_t plane = begin; plane < end; ++plane) {
          const T* xs = xp + plane * isize;
          int64_t o = plane * osize;
          for (int64_t od = 0; od < p.out[0]; ++od) {
            const TapRange& rd = depth_taps[static_cast<size_t>(od)];
            for (int64_t oh = 0; oh < p.out[1]; ++oh, o += ow_n) {
              const TapRange& rh = row_taps[static_cast<size_t>(oh)];
              const auto image_row = [&](int64_t kd, int64_t kh) {
                return ((rd.start + kd * p.dilation[0]) * p.in[1] + rh.start + kh * p.dilation[1]) * p.in[2];
              };
              if (rd.first >= rd.last || rh.first >= rh.last) {  // the whole row of windows is padding
                std::fill(yp + o, yp + o + ow_n, StoreAs<T>(kEmpty));
                if (indices != nullptr) std::fill(indices + o, indices + o + ow_n, int64_t{-1});
                continue;
              }
              if constexpr (std::is_same_v<T, C>) {
                if (row_kernel != nullptr) {
                  int64_t nrows = 0;
                  for (int64_t kd = rd.first; kd < rd.last; ++kd) {
                    for (int64_t kh = rh.first; kh < rh.last; ++kh) {
                      window_rows[static_cast<size_t>(nrows++)] = image_row(kd, kh);
                    }
                  }
                  row_kernel(xs, window_rows.data(), nrows, p.in[2], p.pad_begin[2], inner_lo, inner_hi, ow_n, kStart,
                             kEmpty, yp + o, window_at.data());
                  if (indices != nullptr) {
                    for (int64_t ow = 0; ow < ow_n; ++ow) {
                      const int64_t b = window_at[static_cast<size_t>(ow)];
                      indices[o + ow] = b < 0 ? -1 : plane * isize + (col_major ? ColumnMajor(b) : b);
                    }
                  }
                  continue;
                }
              }
              for (int64_t kd = rd.first; kd < rd.last; ++kd) {
                for (int64_t kh = rh.first; kh < rh.last; ++kh) {
                  const T* src = xs + image_row(kd, kh);
                  if (kd == rd.first && kh == rh.first) {
                    for (int64_t iw = 0; iw < p.in[2]; ++iw) cm[iw] = Load(src[iw]);
                  } else {
                    for (int64_t iw = 0; iw < p.in[2]; ++iw) cm[iw] = MaxNanWins(cm[iw], C(Load(src[iw])));
                  }
                }
              }
              std::fill(bv, bv + ow_n, kStart);
              for (int64_t kw = 0; kw < p.kernel[2]; ++kw) {
                const auto [lo, hi] = ow_range[static_cast<size_t>(kw)];
                const int64_t shift = kw * p.dilation[2] - p.pad_begin[2];
                if (sw == 1) {
                  MaxAlongRow<1>(cm, sw, shift, lo, hi, bv);
                } else if (sw == 2) {
                  MaxAlongRow<2>(cm, sw, shift, lo, hi, bv);
                } else {
                  MaxAlongRow<0>(cm, sw, shift, lo, hi, bv);
                }
              }
              if (indices == nullptr) {
                if (every_ow_has_tap) {
                  for (int64_t ow = 0; ow < ow_n; ++ow) yp[o + ow] = StoreAs<T>(bv[ow]);
                } else {
                  for (int64_t ow = 0; ow < ow_n; ++ow) {
                    yp[o + ow] = StoreAs<T>(ow_has_tap[static_cast<size_t>(ow)] != 0 ? bv[ow] : kEmpty);
                  }
                }
                continue;
              }
              I* bi = best.data();
              std::fill(bi, bi + ow_n, I(-1));
              for (int64_t kd = rd.last - 1; kd >= rd.first; --kd) {
                for (int64_t kh = rh.last - 1; kh >= rh.first; --kh) {
                  const int64_t row = image_row(kd, kh);
                  for (int64_t kw = p.kernel[2] - 1; kw >= 0; --kw) {
                    const auto [lo, hi] = ow_range[static_cast<size_t>(kw)];
                    const int64_t shift = row + kw * p.dilation[2] - p.pad_begin[2];
                    for (int64_t ow = lo; ow < hi; ++ow) {
                      const I off = static_cast<I>(ow * sw + shift);
                      const C v = Load(xs[off]);
                      const C m = bv[ow];
                      bool same = v == m;
                      if constexpr (std::is_floating_point_v<C>) same = same | ((v != v) & (m != m));
                      bi[ow] = same ? off : bi[ow];
                    }
                  }
                }
              }
              for (int64_t ow = 0; ow < ow_n; ++ow) {
                const int64_t b = bi[ow];
                if (b < 0) {
                  yp[o + ow] = StoreAs<T>(kEmpty);
                  indices[o + ow] = -1;
                  continue;
                }
                yp[o + ow] = xs[b];
                indices[o + ow] = plane * isize + (col_major ? ColumnMajor(b) : b);
              }
            }
          }
        }
      });
    };
    if (isize <= std::numeric_limits<int32_t>::max()) {
      run(int32_t{});
    } else {
      run(int64_t{});
    }
  });
  if (!st.ok()) return UnsupportedDtype(ctx, x.dtype(), "X");
  return Status::Ok();
}

Status AveragePool(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (!IsFloatFamily(x.dtype())) return UnsupportedDtype(ctx, x.dtype(), "X");
  MEMOPT_ASSIGN_OR_RETURN(Pool3 p, Prepare(ctx, x.dtype()));
  const bool include_pad = ctx.node->GetInt("count_include_pad", 0) != 0;
  return DispatchCompute(ctx, x.dtype(), [&](auto tag) -> Status {
    using C = typename decltype(tag)::type;
    MapPlanes<C>(p, x, ctx.outputs[0], [&](const C* xs, int64_t od, int64_t oh, int64_t ow) {
      C sum = 0;
      int64_t count = 0;
      const int64_t padded = ForWindow(p, od, oh, ow, [&](int64_t off, int64_t, int64_t, int64_t) {
        sum += xs[off];
        ++count;
      });
      const int64_t div = include_pad ? padded : count;
      return div > 0 ? sum / static_cast<C>(div) : C(0);
    });
    return Status::Ok();
  });
}

Status LpPool(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (!IsFloatFamily(x.dtype())) return UnsupportedDtype(ctx, x.dtype(), "X");
  MEMOPT_ASSIGN_OR_RETURN(Pool3 p, Prepare(ctx, x.dtype()));
  const int64_t pw = ctx.node->GetInt("p", 2);
  return DispatchCompute(ctx, x.dtype(), [&](auto tag) -> Status {
    using C = typename decltype(tag)::type;
    const C pc = static_cast<C>(pw);
    MapPlanes<C>(p, x, ctx.outputs[0], [&](const C* xs, int64_t od, int64_t oh, int64_t ow) {
      C sum = 0;
      ForWindow(p, od, oh, ow, [&](int64_t off, int64_t, int64_t, int64_t) { sum += std::pow(std::abs(xs[off]), pc); });
      return std::pow(sum, C(1) / pc);
    });
    return Status::Ok();
  });
}

enum class GlobalKind { kAverage, kMax, kLp };

template <GlobalKind kKind>
Status GlobalPool(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (x.rank() < 2) return ctx.Error("X " + ShapeToString(x.shape()) + " needs rank >= 2 ([N, C, ...])");
  if (!IsFloatFamily(x.dtype()) && !(kKind == GlobalKind::kMax && IsInteger(x.dtype()))) {
    return UnsupportedDtype(ctx, x.dtype(), "X");
  }
  std::vector<int64_t> out_shape(x.shape().size(), 1);
  out_shape[0] = x.dim(0);
  out_shape[1] = x.dim(1);
  ctx.outputs[0] = Tensor(x.dtype(), out_shape);
  const int64_t planes = x.dim(0) * x.dim(1);
  const int64_t size = ProductOf(x.shape(), 2, x.rank());
  const int64_t pw = ctx.node->GetInt("p", 2);
  Status st = DispatchNumeric(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = std::conditional_t<std::is_same_v<ComputeType<T>, double>, double,
                                 std::conditional_t<std::is_floating_point_v<ComputeType<T>>, float, ComputeType<T>>>;
    const T* xp = x.data<T>();
    T* yp = ctx.outputs[0].data<T>();
    ParallelFor(planes, size, [&](int64_t begin, int64_t end) {
      for (int64_t pl = begin; pl < end; ++pl) {
        const T* xs = xp + pl * size;
        if constexpr (kKind == GlobalKind::kMax) {
          C best = size > 0 ? C(Load(xs[0])) : std::numeric_limits<C>::lowest();
          for (int64_t i = 1; i < size; ++i) best = std::max<C>(best, Load(xs[i]));
          yp[pl] = StoreAs<T>(best);
        } else if constexpr (kKind == GlobalKind::kAverage) {
          double sum = 0;
          if constexpr (std::is_same_v<T, C>) {
            sum = SumOf(xs, size);  // block sums that vectorise (exec/kernels/block_sum.h)
          } else {
            for (int64_t i = 0; i < size; ++i) sum += static_cast<double>(Load(xs[i]));
          }
          yp[pl] = StoreAs<T>(static_cast<C>(size > 0 ? sum / static_cast<double>(size) : 0.0));
        } else {
          double sum = 0;
          for (int64_t i = 0; i < size; ++i) sum += std::pow(std::abs(static_cast<double>(Load(xs[i]))), double(pw));
          yp[pl] = StoreAs<T>(static_cast<C>(std::pow(sum, 1.0 / static_cast<double>(pw))));
        }
      }
    });
  });
  if (!st.ok()) return UnsupportedDtype(ctx, x.dtype(), "X");
  return Status::Ok();
}

}  // namespace

static void RegisterPoolKernels(OpRegistry& r) {
  std::vector<DataType> max_types = FloatTypes();
  max_types.push_back(DataType::kInt8);
  max_types.push_back(DataType::kUint8);
  r.SetCpuKernel("", "MaxPool", MaxPool, max_types);
  r.SetCpuKernel("", "AveragePool", AveragePool, FloatTypes());
  r.SetCpuKernel("", "LpPool", LpPool, FloatTypes());
  r.SetCpuKernel("", "GlobalAveragePool", GlobalPool<GlobalKind::kAverage>, FloatTypes());
  r.SetCpuKernel("", "GlobalMaxPool", GlobalPool<GlobalKind::kMax>, FloatTypes());
  r.SetCpuKernel("", "GlobalLpPool", GlobalPool<GlobalKind::kLp>, FloatTypes());
}

}  // namespace memopt::math

MEMOPT_OPS(conv, pool_cpu) {
  memopt::math::RegisterPoolKernels(ops);
}
