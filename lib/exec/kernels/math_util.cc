#include "exec/kernels/math_util.h"

#include <algorithm>

#include "shape/window_attributes.h"

namespace memopt::math {

Status UnsupportedDtype(const KernelContext& ctx, DataType t, const std::string& what) {
  return Unsupported(ctx.Error("unsupported data type '" + DataTypeName(t) + "' for " + what).message());
}

namespace {

std::vector<int64_t> OrDefault(std::vector<int64_t> v, size_t n, int64_t def) {
  if (v.empty()) v.assign(n, def);
  return v;
}

int64_t CeilDiv(int64_t a, int64_t b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); }
int64_t FloorDiv(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

}  // namespace

Expected<WindowGeometry> ForwardWindow(const KernelContext& ctx, const std::vector<int64_t>& in,
                                       const std::vector<int64_t>& kernel_from_weights, bool ceil_mode) {
  const Node& node = *ctx.node;
  const size_t n = in.size();
  WindowGeometry g;
  g.kernel = node.GetInts("kernel_shape");
  if (g.kernel.empty()) g.kernel = kernel_from_weights;
  if (g.kernel.size() != n) {
    return ctx.Error("kernel_shape has " + std::to_string(g.kernel.size()) + " entries but the input has " +
                     std::to_string(n) + " spatial dims");
  }
  // The counts and signs, as shape inference checks them on load (shape/window_attributes.h).
  if (Status s = shape::CheckWindowAttributes(node, static_cast<int64_t>(n)); !s.ok()) return ctx.Error(s.message());
  g.strides = OrDefault(node.GetInts("strides"), n, 1);
  g.dilations = OrDefault(node.GetInts("dilations"), n, 1);
  g.pads = OrDefault(node.GetInts("pads"), 2 * n, 0);
  for (size_t i = 0; i < n; ++i) {
    if (g.kernel[i] <= 0) return ctx.Error("kernel_shape has the entry " + std::to_string(g.kernel[i]) + "; its entries must be positive");
  }
  const std::string auto_pad = node.GetString("auto_pad", "NOTSET");
  g.out.resize(n);
  for (size_t i = 0; i < n; ++i) {
    const int64_t dk = (g.kernel[i] - 1) * g.dilations[i] + 1;
    const int64_t s = g.strides[i];
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      g.out[i] = CeilDiv(in[i], s);
      const int64_t total = std::max<int64_t>(0, (g.out[i] - 1) * s + dk - in[i]);
      const int64_t small = total / 2;
      g.pads[i] = auto_pad == "SAME_UPPER" ? small : total - small;
      g.pads[i + n] = total - g.pads[i];
    } else if (auto_pad == "VALID") {
      g.pads[i] = g.pads[i + n] = 0;
      g.out[i] = FloorDiv(in[i] - dk, s) + 1;
    } else if (auto_pad == "NOTSET" || auto_pad.empty()) {
      const int64_t span = in[i] + g.pads[i] + g.pads[i + n] - dk;
      if (ceil_mode) {
        g.out[i] = CeilDiv(span, s) + 1;
        // A window that would start inside the end padding is dropped.
        if ((g.out[i] - 1) * s >= in[i] + g.pads[i]) --g.out[i];
      } else {
        g.out[i] = FloorDiv(span, s) + 1;
      }
    } else {
      return ctx.Error("unknown auto_pad '" + auto_pad + "' (expected NOTSET, SAME_UPPER, SAME_LOWER or VALID)");
    }
    if (g.out[i] < 0) g.out[i] = 0;
  }
  return g;
}

}  // namespace memopt::math
