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
/// nodes and steps instead of a fresh allocation, and its page faults, per call. Like any kernel
/// scratch it is not counted as a tensor by the memory tracker.
template <typename C>
class ColumnBuffer {
 public:
  explicit ColumnBuffer(int64_t elements)
      : buf_(elements > 0 ? BufferPool::Global().AcquireZeroed(static_cast<size_t>(elements) * sizeof(C)) : nullptr) {}
  C* data() { return reinterpret_cast<C*>(buf_.get()); }

 private:
  std::shared_ptr<std::byte[]> buf_;
};

/// x: [channels, in...] -> col: [channels * KernelSize(), OutSize()].
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
      for (int64_t od = 0; od < w.out[0]; ++od) {
        const int64_t id = od * w.stride[0] - w.pad[0] + kd * w.dilation[0];
        for (int64_t oh = 0; oh < w.out[1]; ++oh) {
          const int64_t ih = oh * w.stride[1] - w.pad[1] + kh * w.dilation[1];
          C* d = dst + (od * w.out[1] + oh) * w.out[2];
          if (id < 0 || id >= w.in[0] || ih < 0 || ih >= w.in[1]) {
            for (int64_t ow = 0; ow < w.out[2]; ++ow) d[ow] = C(0);
            continue;
          }
          const C* src = xc + (id * w.in[1] + ih) * w.in[2];
          // iw = ow * stride + off lies in the image for ow in [lo, hi): zeros around a copy.
          const int64_t off = kw * w.dilation[2] - w.pad[2], sw = w.stride[2];
          const int64_t lo = std::min(w.out[2], off >= 0 ? int64_t{0} : (-off + sw - 1) / sw);
          const int64_t hi = std::max(lo, std::min(w.out[2], w.in[2] - off <= 0 ? int64_t{0} : (w.in[2] - off + sw - 1) / sw));
          for (int64_t ow = 0; ow < lo; ++ow) d[ow] = C(0);
          if (sw == 1) {
            std::copy(src + lo + off, src + hi + off, d + lo);
          } else {
            for (int64_t ow = lo; ow < hi; ++ow) d[ow] = src[ow * sw + off];
          }
          for (int64_t ow = hi; ow < w.out[2]; ++ow) d[ow] = C(0);
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
