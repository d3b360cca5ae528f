// im2col / col2im for 1-D, 2-D and 3-D windows (spatial dims padded to 3 with size-1 dims).
//
// The column matrix has one row per (channel, kd, kh, kw) and one column per output position
// (od, oh, ow): col[row][o] = x[c][od*sd - pd + kd*dd][oh*sh - ph + kh*dh][ow*sw - pw + kw*dw]
// (zero outside the image). Col2Im is the adjoint: it adds each column entry back into the image.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "exec/buffer_pool.h"
#include "exec/kernels/kernel_util.h"

namespace memopt::math {

struct Window3 {
  std::array<int64_t, 3> in{1, 1, 1};   ///< image size
  std::array<int64_t, 3> out{1, 1, 1};  ///< positions per dim (columns of the col matrix)
  std::array<int64_t, 3> kernel{1, 1, 1};
  std::array<int64_t, 3> stride{1, 1, 1};
  std::array<int64_t, 3> dilation{1, 1, 1};
  std::array<int64_t, 3> pad{0, 0, 0};  ///< begin pads
  int64_t InSize() const { return in[0] * in[1] * in[2]; }
  int64_t OutSize() const { return out[0] * out[1] * out[2]; }
  int64_t KernelSize() const { return kernel[0] * kernel[1] * kernel[2]; }
  /// A 1x1 window with unit stride and no padding: the image is its own column matrix.
  bool ReadsImageAsIs() const {
    bool same = KernelSize() == 1;
    for (size_t i = 0; i < 3; ++i) same = same && stride[i] == 1 && pad[i] == 0 && out[i] == in[i];
    return same;
  }
};

/// The window of 1 to 3 spatial dims, padded with leading size-1 dims (pad_begin: at least
/// in.size() entries, the begin pads first, as in ONNX's pads).
inline Window3 MakeWindow3(const std::vector<int64_t>& in, const std::vector<int64_t>& out,
                           const std::vector<int64_t>& kernel, const std::vector<int64_t>& stride,
                           const std::vector<int64_t>& dilation, const std::vector<int64_t>& pad_begin) {
  Window3 w;
  const size_t sd = in.size(), off = 3 - sd;
  for (size_t i = 0; i < sd; ++i) {
    w.in[off + i] = in[i];
    w.out[off + i] = out[i];
    w.kernel[off + i] = kernel[i];
    w.stride[off + i] = stride[i];
    w.dilation[off + i] = dilation[i];
    w.pad[off + i] = pad_begin[i];
  }
  return w;
}

/// Scratch for a column matrix from the executor's buffer pool (exec/buffer_pool.h): reused across
/// nodes and steps instead of a fresh allocation, and its page faults, per call. It is not
/// cleared: Im2Col and the products that fill it write every element. Like any kernel scratch it
/// is not counted as a tensor by the memory tracker.
template <typename C>
class ColumnBuffer {
 public:
  explicit ColumnBuffer(int64_t elements)
      : buf_(elements > 0 ? BufferPool::Global().AcquireUninitialized(static_cast<size_t>(elements) * sizeof(C))
                          : nullptr) {}
  C* data() { return reinterpret_cast<C*>(buf_.get()); }

 private:
  std::shared_ptr<std::byte[]> buf_;
};

/// Output positions [begin, end) of a window (flat over od, oh, ow): the columns one tile of the
/// column matrix holds. A kernel that walks the positions a tile at a time holds a column matrix
/// of ColumnTilePositions() columns instead of OutSize(): for a 3x3 convolution over 128 channels
/// and a 64x64 image, 1 MiB instead of 18 MiB per thread.
struct PositionRange {
  int64_t begin = 0, end = 0;
  int64_t size() const { return end - begin; }
};

/// Bytes one column tile holds at most (unless the floor of kMinTilePositions needs more).
inline constexpr int64_t kColumnTileBytes = int64_t{1} << 20;
/// Positions a tile holds at least (the products' inner or outer dim): no skinnier than this.
inline constexpr int64_t kMinTilePositions = 64;

/// Positions per tile for a column matrix of `rows` rows of elem_bytes elements: within
/// kColumnTileBytes, at least kMinTilePositions, whole output rows when one fits, at most all.
inline int64_t ColumnTilePositions(const Window3& w, int64_t rows, int64_t elem_bytes) {
  const int64_t all = w.OutSize();
  int64_t t = std::max(kMinTilePositions, kColumnTileBytes / std::max<int64_t>(1, rows * elem_bytes));
  if (w.out[2] > 0 && t >= w.out[2]) t -= t % w.out[2];
  return std::clamp<int64_t>(t, 1, std::max<int64_t>(all, 1));
}

/// Calls fn(PositionRange) for consecutive tiles of `tile` positions covering the window's output.
template <typename F>
void ForEachTile(const Window3& w, int64_t tile, F&& fn) {
  const int64_t all = w.OutSize();
  for (int64_t b = 0; b < all; b += tile) fn(PositionRange{b, std::min(all, b + tile)});
}

/// Positions [ow0, ow1) of one row of the column matrix along the innermost dim: d[ow - ow0] =
/// src[ow * stride + off] where that lies in [0, in), else 0; [lo, hi) is the in-image span.
template <typename C>
inline void Im2ColRow(const C* src, C* d, int64_t ow0, int64_t ow1, int64_t stride, int64_t off, int64_t lo,
                      int64_t hi) {
  lo = std::clamp(lo, ow0, ow1);
  hi = std::clamp(hi, lo, ow1);
  for (int64_t ow = ow0; ow < lo; ++ow) d[ow - ow0] = C(0);
  if (stride == 1) {
    const C* s = src + off + lo;
    C* dl = d + (lo - ow0);
    for (int64_t j = 0; j < hi - lo; ++j) dl[j] = s[j];
  } else {
    for (int64_t ow = lo; ow < hi; ++ow) d[ow - ow0] = src[ow * stride + off];
  }
  for (int64_t ow = hi; ow < ow1; ++ow) d[ow - ow0] = C(0);
}

/// Walks the positions in `range` by output row: rows(od, oh_begin, oh_end, column) for a run of
/// whole rows of one od, part(od, oh, ow0, ow1, column) for part of one row, column being the
/// run's first column in the tile.
template <typename Rows, typename Part>
void ForEachRowRun(const Window3& w, PositionRange range, Rows&& rows, Part&& part) {
  const int64_t row_len = w.out[2], plane = w.out[1] * w.out[2];
  int64_t p = range.begin;
  while (p < range.end) {
    const int64_t od = p / plane, in_plane = p % plane;
    const int64_t oh = in_plane / row_len, ow = in_plane % row_len;
    if (ow != 0 || range.end - p < row_len) {  // part of one row
      const int64_t ow1 = std::min(row_len, ow + range.end - p);
      part(od, oh, ow, ow1, p - range.begin);
      p += ow1 - ow;
      continue;
    }
    // Whole rows of this od, up to the plane's end or the range's.
    const int64_t oh_end = std::min(w.out[1], oh + (range.end - p) / row_len);
    rows(od, oh, oh_end, p - range.begin);
    p += (oh_end - oh) * row_len;
  }
}

/// x: [channels, in...] -> col: [channels * KernelSize(), range.size()], the columns of the
/// positions in `range`, every element written.
template <typename C>
void Im2Col(const C* x, int64_t channels, const Window3& w, C* col, PositionRange range) {
  const int64_t ksize = w.KernelSize();
  const int64_t cols = range.size();
  ParallelFor(channels * ksize, cols, [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      const int64_t c = row / ksize;
      int64_t kr = row % ksize;
      const int64_t kw = kr % w.kernel[2];
      kr /= w.kernel[2];
      const int64_t kh = kr % w.kernel[1];
      const int64_t kd = kr / w.kernel[1];
      const C* xc = x + c * w.InSize();
      C* dst = col + row * cols;
      // iw = ow * stride + off lies in the image for ow in [lo, hi) (the same for every od, oh).
      const int64_t off = kw * w.dilation[2] - w.pad[2], sw = w.stride[2];
      const int64_t lo = std::min(w.out[2], off >= 0 ? int64_t{0} : (-off + sw - 1) / sw);
      const int64_t hi =
          std::max(lo, std::min(w.out[2], w.in[2] - off <= 0 ? int64_t{0} : (w.in[2] - off + sw - 1) / sw));
      // Unit strides along rows and columns, keeping the image's width ("same" convolutions): the
      // in-image rows of a run of whole rows are a single shifted copy of the plane, then the
      // columns the shift carried across a row edge are zeroed.
      const bool shifted_copy =
          sw == 1 && w.stride[1] == 1 && w.out[2] == w.in[2] && off > -w.in[2] && off < w.in[2];
      const auto image_row = [&](int64_t od, int64_t oh) -> const C* {  // nullptr: outside the image
        const int64_t id = od * w.stride[0] - w.pad[0] + kd * w.dilation[0];
        const int64_t ih = oh * w.stride[1] - w.pad[1] + kh * w.dilation[1];
        if (id < 0 || id >= w.in[0] || ih < 0 || ih >= w.in[1]) return nullptr;
        return xc + (id * w.in[1] + ih) * w.in[2];
      };
      const auto part = [&](int64_t od, int64_t oh, int64_t ow0, int64_t ow1, int64_t column) {
        C* d = dst + column;
        const C* src = image_row(od, oh);
        if (src == nullptr) {
          std::fill(d, d + (ow1 - ow0), C(0));
        } else {
          Im2ColRow(src, d, ow0, ow1, sw, off, lo, hi);
        }
      };
      const auto rows = [&](int64_t od, int64_t oh_begin, int64_t oh_end, int64_t column) {
        const auto row_at = [&](int64_t oh) { return dst + column + (oh - oh_begin) * w.out[2]; };
        const int64_t id = od * w.stride[0] - w.pad[0] + kd * w.dilation[0];
        if (!shifted_copy) {
          for (int64_t oh = oh_begin; oh < oh_end; ++oh) part(od, oh, 0, w.out[2], column + (oh - oh_begin) * w.out[2]);
          return;
        }
        if (id < 0 || id >= w.in[0]) {
          std::fill(row_at(oh_begin), row_at(oh_end), C(0));
          return;
        }
        // oh in [oh0, oh1) reads image rows ih = oh + row_shift in [0, in[1]).
        const int64_t row_shift = kh * w.dilation[1] - w.pad[1];
        const int64_t oh0 = std::clamp<int64_t>(-row_shift, oh_begin, oh_end);
        const int64_t oh1 = std::clamp<int64_t>(w.in[1] - row_shift, oh0, oh_end);
        std::fill(row_at(oh_begin), row_at(oh0), C(0));
        std::fill(row_at(oh1), row_at(oh_end), C(0));
        if (oh0 < oh1) {
          const int64_t base = (id * w.in[1] + oh0 + row_shift) * w.in[2] + off;
          const int64_t len = (oh1 - oh0) * w.out[2];
          const int64_t jlo = std::clamp<int64_t>(-base, 0, len);
          const int64_t jhi = std::clamp<int64_t>(w.InSize() - base, jlo, len);
          C* d = row_at(oh0);
          if (jlo > 0) std::fill(d, d + jlo, C(0));
          std::copy(xc + (base + jlo), xc + (base + jhi), d + jlo);
          if (jhi < len) std::fill(d + jhi, d + len, C(0));
          // The few columns per row the shift carried across a row edge: strided stores, not a
          // memset call per row (which cost more than the copy itself).
          for (int64_t ow = 0; ow < lo; ++ow) {
            for (int64_t r = 0; r < oh1 - oh0; ++r) d[r * w.out[2] + ow] = C(0);
          }
          for (int64_t ow = hi; ow < w.out[2]; ++ow) {
            for (int64_t r = 0; r < oh1 - oh0; ++r) d[r * w.out[2] + ow] = C(0);
          }
        }
      };
      ForEachRowRun(w, range, rows, part);
    }
  });
}

/// The whole column matrix: x: [channels, in...] -> col: [channels * KernelSize(), OutSize()].
template <typename C>
void Im2Col(const C* x, int64_t channels, const Window3& w, C* col) {
  Im2Col(x, channels, w, col, PositionRange{0, w.OutSize()});
}

/// col: [channels * KernelSize(), range.size()], the columns of the positions in `range`,
/// accumulated into x: [channels, in...] (x is not cleared first). Channels are processed in
/// parallel (each writes only its own image plane).
template <typename C>
void Col2Im(const C* col, int64_t channels, const Window3& w, C* x, PositionRange range) {
  const int64_t ksize = w.KernelSize();
  const int64_t cols = range.size();
  ParallelFor(channels, ksize * cols, [&](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c) {
      C* xc = x + c * w.InSize();
      for (int64_t kr = 0; kr < ksize; ++kr) {
        const int64_t kw = kr % w.kernel[2];
        const int64_t kh = (kr / w.kernel[2]) % w.kernel[1];
        const int64_t kd = kr / (w.kernel[2] * w.kernel[1]);
        const C* src = col + (c * ksize + kr) * cols;
        const auto part = [&](int64_t od, int64_t oh, int64_t ow0, int64_t ow1, int64_t column) {
          const int64_t id = od * w.stride[0] - w.pad[0] + kd * w.dilation[0];
          const int64_t ih = oh * w.stride[1] - w.pad[1] + kh * w.dilation[1];
          if (id < 0 || id >= w.in[0] || ih < 0 || ih >= w.in[1]) return;
          const C* s = src + column;
          C* dst = xc + (id * w.in[1] + ih) * w.in[2];
          for (int64_t ow = ow0; ow < ow1; ++ow) {
            const int64_t iw = ow * w.stride[2] - w.pad[2] + kw * w.dilation[2];
            if (iw >= 0 && iw < w.in[2]) dst[iw] += s[ow - ow0];
          }
        };
        const auto rows = [&](int64_t od, int64_t oh_begin, int64_t oh_end, int64_t column) {
          for (int64_t oh = oh_begin; oh < oh_end; ++oh) part(od, oh, 0, w.out[2], column + (oh - oh_begin) * w.out[2]);
        };
        ForEachRowRun(w, range, rows, part);
      }
    }
  });
}

/// The whole column matrix col: [channels * KernelSize(), OutSize()] accumulated into x.
template <typename C>
void Col2Im(const C* col, int64_t channels, const Window3& w, C* x) {
  Col2Im(col, channels, w, x, PositionRange{0, w.OutSize()});
}

}  // namespace memopt::math
