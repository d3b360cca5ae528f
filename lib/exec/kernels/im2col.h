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

/// One row of the column matrix along the innermost dim: d[ow] = src[ow * stride + off] where
/// that lies in [0, in), else 0; [lo, hi) is the in-image span.
template <typename C>
inline void Im2ColRow(const C* src, C* d, int64_t out, int64_t stride, int64_t off, int64_t lo, int64_t hi) {
  for (int64_t ow = 0; ow < lo; ++ow) d[ow] = C(0);
  if (stride == 1) {
    const C* s = src + off;
    for (int64_t ow = lo; ow < hi; ++ow) d[ow] = s[ow];
  } else {
    for (int64_t ow = lo; ow < hi; ++ow) d[ow] = src[ow * stride + off];
  }
  for (int64_t ow = hi; ow < out; ++ow) d[ow] = C(0);
}

/// x: [channels, in...] -> col: [channels * KernelSize(), OutSize()], every element written.
template <typename C>
void Im2Col(const C* x, int64_t channels, const Window3& w, C* col) {
  const int64_t ksize = w.KernelSize();
  const int64_t osize = w.OutSize();
  ParallelFor(channels * ksize, osize, [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      const int64_t c = row / ksize;
      int64_t kr = row % ksize;
      const int64_t kw = kr % w.kernel[2];
      kr /= w.kernel[2];
      const int64_t kh = kr % w.kernel[1];
      const int64_t kd = kr / w.kernel[1];
      const C* xc = x + c * w.InSize();
      C* dst = col + row * osize;
      // iw = ow * stride + off lies in the image for ow in [lo, hi) (the same for every od, oh).
      const int64_t off = kw * w.dilation[2] - w.pad[2], sw = w.stride[2];
      const int64_t lo = std::min(w.out[2], off >= 0 ? int64_t{0} : (-off + sw - 1) / sw);
      const int64_t hi =
          std::max(lo, std::min(w.out[2], w.in[2] - off <= 0 ? int64_t{0} : (w.in[2] - off + sw - 1) / sw));
      // Unit strides along rows and columns, keeping the image's width ("same" convolutions): the
      // in-image rows of one od are a single shifted copy of the plane, then the columns the shift
      // carried across a row edge are zeroed.
      const bool shifted_copy =
          sw == 1 && w.stride[1] == 1 && w.out[2] == w.in[2] && off > -w.in[2] && off < w.in[2];
      for (int64_t od = 0; od < w.out[0]; ++od) {
        const int64_t id = od * w.stride[0] - w.pad[0] + kd * w.dilation[0];
        if (shifted_copy) {
          C* block = dst + od * w.out[1] * w.out[2];
          if (id < 0 || id >= w.in[0]) {
            std::fill(block, block + w.out[1] * w.out[2], C(0));
            continue;
          }
          // oh in [oh0, oh1) reads image rows ih = oh + row_shift in [0, in[1]).
          const int64_t row_shift = kh * w.dilation[1] - w.pad[1];
          const int64_t oh0 = std::clamp<int64_t>(-row_shift, 0, w.out[1]);
          const int64_t oh1 = std::clamp<int64_t>(w.in[1] - row_shift, oh0, w.out[1]);
          if (oh0 > 0) std::fill(block, block + oh0 * w.out[2], C(0));
          if (oh1 < w.out[1]) std::fill(block + oh1 * w.out[2], block + w.out[1] * w.out[2], C(0));
          if (oh0 < oh1) {
            const int64_t base = (id * w.in[1] + oh0 + row_shift) * w.in[2] + off;
            const int64_t len = (oh1 - oh0) * w.out[2];
            const int64_t jlo = std::clamp<int64_t>(-base, 0, len);
            const int64_t jhi = std::clamp<int64_t>(w.InSize() - base, jlo, len);
            C* d = block + oh0 * w.out[2];
            const C* sp = xc + base;
            if (jlo > 0) std::fill(d, d + jlo, C(0));
            std::copy(sp + jlo, sp + jhi, d + jlo);
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
          continue;
        }
        for (int64_t oh = 0; oh < w.out[1]; ++oh) {
          const int64_t ih = oh * w.stride[1] - w.pad[1] + kh * w.dilation[1];
          C* d = dst + (od * w.out[1] + oh) * w.out[2];
          if (id < 0 || id >= w.in[0] || ih < 0 || ih >= w.in[1]) {
            for (int64_t ow = 0; ow < w.out[2]; ++ow) d[ow] = C(0);
          } else {
            Im2ColRow(xc + (id * w.in[1] + ih) * w.in[2], d, w.out[2], sw, off, lo, hi);
          }
        }
      }
    }
  });
}

/// col: [channels * KernelSize(), OutSize()] accumulated into x: [channels, in...] (x is not
/// cleared first). Channels are processed in parallel (each writes only its own image plane).
template <typename C>
void Col2Im(const C* col, int64_t channels, const Window3& w, C* x) {
  const int64_t ksize = w.KernelSize();
  const int64_t osize = w.OutSize();
  ParallelFor(channels, ksize * osize, [&](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c) {
      C* xc = x + c * w.InSize();
      for (int64_t kr = 0; kr < ksize; ++kr) {
        const int64_t kw = kr % w.kernel[2];
        const int64_t kh = (kr / w.kernel[2]) % w.kernel[1];
        const int64_t kd = kr / (w.kernel[2] * w.kernel[1]);
        const C* src = col + (c * ksize + kr) * osize;
        for (int64_t od = 0; od < w.out[0]; ++od) {
          const int64_t id = od * w.stride[0] - w.pad[0] + kd * w.dilation[0];
          if (id < 0 || id >= w.in[0]) continue;
          for (int64_t oh = 0; oh < w.out[1]; ++oh) {
            const int64_t ih = oh * w.stride[1] - w.pad[1] + kh * w.dilation[1];
            if (ih < 0 || ih >= w.in[1]) continue;
            const C* s = src + (od * w.out[1] + oh) * w.out[2];
            C* dst = xc + (id * w.in[1] + ih) * w.in[2];
            for (int64_t ow = 0; ow < w.out[2]; ++ow) {
              const int64_t iw = ow * w.stride[2] - w.pad[2] + kw * w.dilation[2];
              if (iw >= 0 && iw < w.in[2]) dst[iw] += s[ow];
            }
          }
        }
      }
    }
  });
}

}  // namespace memopt::math
