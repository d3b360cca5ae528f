// What Resize (opset 11..19) and its gradient (com.microsoft ResizeGrad) share: the decode of the
// attributes and the roi/scales/sizes inputs, and the taps of the separable interpolation.
//
// Interpolation is separable: each resized axis is processed in turn. For one output coordinate y
// the source coordinate x comes from the coordinate transformation; nearest picks one source index,
// linear/cubic weight the taps idx around x by K((idx - x) * s) where K is the triangle or cubic
// kernel and s = scale for antialiased downsampling (the kernel widens by 1/scale), else 1. Taps
// outside the input read the edge element (or are dropped and the weights renormalised with
// exclude_outside); tf_crop_and_resize writes extrapolation_value where x leaves the input.
// Every mode is linear in X, so the gradient is the same taps read backwards.
#pragma once

#include <string>
#include <vector>

#include "exec/kernel.h"
#include "util/status.h"

namespace memopt::tensor_kernels {

enum class Mode { kNearest, kLinear, kCubic };

struct ResizeParams {  // the attributes
  Mode mode = Mode::kNearest;
  std::string coord = "half_pixel";
  std::string nearest = "round_prefer_floor";
  bool legacy_nearest = false;  // opset < 11: floor when upsampling, ceil when downsampling
  double cubic_a = -0.75;
  bool exclude_outside = false;
  bool antialias = false;
  double extrapolation = 0.0;
};

struct Tap {
  int64_t index;
  double weight;
};

/// Everything one Resize computes from, per axis of X (axes not listed in `axes` keep scale 1).
struct ResizeSetup {
  ResizeParams params;
  std::vector<double> scales;
  std::vector<int64_t> sizes;  ///< the output shape
  std::vector<double> roi;     ///< 2 * rank entries (starts, then ends), or empty
  std::vector<bool> resized;   ///< per axis: whether the axis is interpolated at all
};

/// Decodes the Resize whose X is input `x_index` of `ctx` (roi, scales and sizes follow it), with
/// the node's attributes: Resize itself (x_index 0, Upsample and Resize-10 included) or ResizeGrad
/// (x_index 1).
Expected<ResizeSetup> DecodeResize(const KernelContext& ctx, int x_index);

/// Taps of every output coordinate on axis `axis` of a tensor of shape `in_shape`, plus the
/// extrapolated flags (tf_crop_and_resize).
void AxisTaps(const ResizeSetup& s, const std::vector<int64_t>& in_shape, int64_t axis,
              std::vector<std::vector<Tap>>& taps, std::vector<bool>& extrapolated);

/// The leading axes no tap moves (before the first resized one, `axis`) cut X and Y into `count`
/// independent slices of in_size and out_size elements: Resize and ResizeGrad compute one slice
/// at a time, so their double temporaries stay a slice (a plane of an image batch), not the tensor.
struct ResizeSlices {
  int64_t axis = 0, count = 1, in_size = 0, out_size = 0;
};
ResizeSlices SlicesOf(const std::vector<bool>& resized, const std::vector<int64_t>& in_shape,
                      const std::vector<int64_t>& out_shape);

}  // namespace memopt::tensor_kernels
