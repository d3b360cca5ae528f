// ConvTranspose (1-D/2-D/3-D, group, strides, dilations, pads, output_padding, output_shape,
// auto_pad): exec/kernels/transposed_conv.h, which ConvGrad's dX shares; this file reads the
// attributes and the output geometry.
//
// Output size and begin pads follow the ONNX reference: explicit pads (default 0) with
// out = stride*(in-1) + output_padding + (k-1)*dilation + 1 - pads, unless output_shape is given;
// with auto_pad SAME_* and no pads, out = output_shape (default in*stride) and the total padding
// stride*(in-1) + output_padding + (k-1)*dilation + 1 - out is split floor(total/2) at the begin
// for SAME_UPPER (at the end for SAME_LOWER).
#include <algorithm>
#include <optional>

#include "exec/kernels/float_range.h"
#include "exec/kernels/im2col.h"
#include "exec/kernels/transposed_conv.h"
#include "exec/kernels/math_util.h"
#include "ir/op_registry.h"
#include "shape/window_attributes.h"

namespace memopt::math {
namespace {

int64_t FloorDiv2(int64_t v) { return v >= 0 ? v / 2 : -((-v + 1) / 2); }

struct TransposeGeometry {
  std::vector<int64_t> out;
  std::vector<int64_t> pad_begin;
  std::vector<int64_t> strides, dilations, kernel;
};

Expected<TransposeGeometry> Geometry(const KernelContext& ctx, const std::vector<int64_t>& in,
                                     const std::vector<int64_t>& wk) {
  const Node& node = *ctx.node;
  const size_t n = in.size();
  // The counts and signs, as shape inference checks them on load (shape/window_attributes.h).
  if (Status s = shape::CheckWindowAttributes(node, static_cast<int64_t>(n)); !s.ok()) return ctx.Error(s.message());
  auto get = [&](const char* name, size_t count, int64_t def) -> Expected<std::vector<int64_t>> {
    std::vector<int64_t> v = node.GetInts(name);
    if (v.empty()) v.assign(count, def);
    if (v.size() != count) {
      return ctx.Error(std::string(name) + " has " + std::to_string(v.size()) + " entries, expected " +
                       std::to_string(count));
    }
    return v;
  };
  TransposeGeometry g;
  MEMOPT_ASSIGN_OR_RETURN(g.strides, get("strides", n, 1));
  MEMOPT_ASSIGN_OR_RETURN(g.dilations, get("dilations", n, 1));
  MEMOPT_ASSIGN_OR_RETURN(std::vector<int64_t> out_pad, get("output_padding", n, 0));
  g.kernel = node.GetInts("kernel_shape");
  if (g.kernel.empty()) g.kernel = wk;
  if (g.kernel.size() != n) return ctx.Error("kernel_shape does not match the input's spatial dims");
  std::vector<int64_t> out_shape = node.GetInts("output_shape");
  if (out_shape.size() == n + 2) out_shape.erase(out_shape.begin(), out_shape.begin() + 2);
  if (!out_shape.empty() && out_shape.size() != n) {
    return ctx.Error("output_shape has " + std::to_string(out_shape.size()) + " entries, expected " +
                     std::to_string(n));
  }
  const std::string auto_pad = node.GetString("auto_pad", "NOTSET");
  const bool same = auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER";
  g.out.resize(n);
  g.pad_begin.resize(n);
  if (!node.HasAttr("pads") && same) {
    for (size_t i = 0; i < n; ++i) {
      g.out[i] = out_shape.empty() ? in[i] * g.strides[i] : out_shape[i];
      const int64_t total = g.strides[i] * (in[i] - 1) + out_pad[i] + (g.kernel[i] - 1) * g.dilations[i] + 1 - g.out[i];
      g.pad_begin[i] = auto_pad == "SAME_UPPER" ? FloorDiv2(total) : total - FloorDiv2(total);
    }
  } else {
    MEMOPT_ASSIGN_OR_RETURN(std::vector<int64_t> pads, get("pads", 2 * n, 0));
    for (size_t i = 0; i < n; ++i) {
      g.pad_begin[i] = pads[i];
      g.out[i] = !out_shape.empty() ? out_shape[i]
                                    : g.strides[i] * (in[i] - 1) + out_pad[i] + (g.kernel[i] - 1) * g.dilations[i] + 1 -
                                          pads[i] - pads[i + n];
    }
  }
  for (size_t i = 0; i < n; ++i) {
    if (g.out[i] < 0) return ctx.Error("computed output size is negative; check pads/output_shape");
  }
  return g;
}

Status ConvTranspose(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& w = ctx.input(1);
  const Tensor* bias = ctx.has_input(2) ? &ctx.input(2) : nullptr;
  if (!IsFloatFamily(x.dtype())) return UnsupportedDtype(ctx, x.dtype(), "X");
  const int64_t rank = x.rank();
  if (rank < 3 || rank > 5) {
    return Unsupported(
        ctx.Error("ConvTranspose supports 1-D to 3-D inputs [N, C, d1..d3], got X " + ShapeToString(x.shape()))
            .message());
  }
  if (w.rank() != rank) {
    return ctx.Error("W " + ShapeToString(w.shape()) + " must have the rank of X " + ShapeToString(x.shape()));
  }
  const int64_t group = ctx.node->GetInt("group", 1);
  const int64_t n = x.dim(0), c = x.dim(1);
  if (group <= 0 || c % group != 0 || w.dim(0) != c) {
    return ctx.Error("channels do not match: X " + ShapeToString(x.shape()) + ", W " + ShapeToString(w.shape()) +
                     ", group " + std::to_string(group) + " (W.dim(0) must be C)");
  }
  const int64_t mg = w.dim(1), m = mg * group;
  if (bias != nullptr && bias->numel() != m) {
    return ctx.Error("B " + ShapeToString(bias->shape()) + " must have M = " + std::to_string(m) + " entries");
  }
  const std::vector<int64_t> in(x.shape().begin() + 2, x.shape().end());
  const std::vector<int64_t> wk(w.shape().begin() + 2, w.shape().end());
  MEMOPT_ASSIGN_OR_RETURN(TransposeGeometry g, Geometry(ctx, in, wk));
  // col2im runs "backwards": its image is the output and its column positions are X's pixels.
  const Window3 win = MakeWindow3(g.out, in, wk, g.strides, g.dilations, g.pad_begin);
  std::vector<int64_t> out_shape = {n, m};
  out_shape.insert(out_shape.end(), g.out.begin(), g.out.end());
  ctx.outputs[0] = Tensor(x.dtype(), out_shape);
  Tensor& y = ctx.outputs[0];

  return DispatchCompute(ctx, x.dtype(), [&](auto tag) -> Status {
    using C = typename decltype(tag)::type;
    InView<C> wv(w);  // W and B whole (parameters)
    std::optional<InView<C>> bv;
    if (bias != nullptr) bv.emplace(*bias);
    TransposedConv(x, wv.data(), bv ? bv->data() : nullptr, group, win, y);
    return Status::Ok();
  });
}

}  // namespace

static void RegisterConvTransposeKernels(OpRegistry& r) { r.SetCpuKernel("", "ConvTranspose", ConvTranspose, FloatTypes()); }

}  // namespace memopt::math

MEMOPT_OPS(conv, conv_transpose_cpu) {
  memopt::math::RegisterConvTransposeKernels(ops);
}
