// Gradient rules of convolution and pooling (ort_training_ops.md 3.12, 3.13, 3.22, 3.23): ConvGrad,
// MaxPoolGrad (reading the Indices the builder gives MaxPool before these rules run) and
// AveragePoolGrad. ConvTranspose is the adjoint of Conv, so its gradient is made of the ops both
// executors and ONNX Runtime's CPU provider run: dX = Conv(dY, W), dW = ConvGrad's dW with the
// roles of image and gradient swapped (ConvGrad(X, dY, W)), dB = ReduceSum(dY).
#include "grad/grad_context.h"
#include "ir/op_registry.h"

namespace memopt::grad {
namespace {

Status ConvGrad(NodeGrad& g) {
  std::vector<std::string> outs = {g.GIOrTmp(0, false, ""), g.GIOrTmp(1, false, ""),
                                   g.I(2).empty() ? std::string() : g.GIOrTmp(2, false, "")};
  while (outs.back().empty()) outs.pop_back();
  g.Emit("ConvGrad", {g.GO(0), g.I(0), g.I(1)}, outs, g.CopyAttrs(), kMsDomain);
  return Status::Ok();
}

/// ConvTranspose's padding at both ends of each spatial axis, as explicit pads of the Conv that is
/// its adjoint. With output_shape or SAME_* auto_pad the split depends on the input sizes.
Expected<std::vector<int64_t>> ConvTransposePads(NodeGrad& g, size_t spatial) {
  const Node& node = g.node();
  const std::string auto_pad = node.GetString("auto_pad", "NOTSET");
  const bool same = (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") && !node.HasAttr("pads");
  std::vector<int64_t> pads = node.GetInts("pads");
  if (pads.empty() || auto_pad == "VALID") pads.assign(2 * spatial, 0);
  if (!node.HasAttr("output_shape") && !same) return pads;
  auto ints = [&](const char* name, int64_t def) {
    std::vector<int64_t> v = node.GetInts(name);
    if (v.empty()) v.assign(spatial, def);
    return v;
  };
  const std::optional<std::vector<int64_t>> x = LiteralShape(g.ShapeOf(g.I(0)));
  const std::optional<std::vector<int64_t>> w = LiteralShape(g.ShapeOf(g.I(1)));
  std::vector<int64_t> out_shape = node.GetInts("output_shape");
  if (out_shape.size() == spatial + 2) out_shape.erase(out_shape.begin(), out_shape.begin() + 2);
  const std::vector<int64_t> strides = ints("strides", 1), dilations = ints("dilations", 1);
  const std::vector<int64_t> out_pad = ints("output_padding", 0);
  std::vector<int64_t> kernel = node.GetInts("kernel_shape");
  if (kernel.empty() && w.has_value() && w->size() == spatial + 2) kernel.assign(w->begin() + 2, w->end());
  if (!x.has_value() || x->size() != spatial + 2 || kernel.size() != spatial ||
      (!out_shape.empty() && out_shape.size() != spatial) || strides.size() != spatial ||
      dilations.size() != spatial || out_pad.size() != spatial) {
    return Unsupported("node " + node.Describe() +
                       ": ConvTranspose gradient with output_shape or SAME auto_pad needs the input's spatial sizes "
                       "(bind the dims with --dims, or export with explicit pads)");
  }
  for (size_t i = 0; i < spatial; ++i) {
    const int64_t in = (*x)[i + 2];
    const int64_t out = !out_shape.empty() ? out_shape[i] : in * strides[i];
    const int64_t total = strides[i] * (in - 1) + out_pad[i] + (kernel[i] - 1) * dilations[i] + 1 - out;
    if (!same) {
      pads[i + spatial] = total - pads[i];
    } else {
      const int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2);  // floor
      pads[i] = auto_pad == "SAME_UPPER" ? half : total - half;
      pads[i + spatial] = total - pads[i];
    }
    if (pads[i] < 0 || pads[i + spatial] < 0) {
      return Unsupported("node " + node.Describe() + ": ConvTranspose gradient: output_shape " +
                         "makes a negative padding on spatial axis " + std::to_string(i));
    }
  }
  return pads;
}

Status ConvTransposeGrad(NodeGrad& g) {
  const std::optional<int64_t> rank = g.Rank(g.I(0));
  if (!rank.has_value() || *rank < 3) {
    return Unsupported("node " + g.node().Describe() + ": ConvTranspose gradient needs the rank of X");
  }
  const size_t spatial = static_cast<size_t>(*rank - 2);
  MEMOPT_ASSIGN_OR_RETURN(std::vector<int64_t> pads, ConvTransposePads(g, spatial));
  std::vector<onnx::AttributeProto> attrs = g.CopyAttrs({"pads", "auto_pad", "output_shape", "output_padding"});
  attrs.push_back(AttrInts("pads", pads));
  if (g.NeedGI(0)) g.Emit("Conv", {g.GO(0), g.I(1)}, {g.GI(0)}, attrs);
  if (g.NeedGI(1)) g.Emit("ConvGrad", {g.I(0), g.GO(0), g.I(1)}, {"", g.GI(1)}, attrs, kMsDomain);
  if (g.num_inputs() > 2 && g.NeedGI(2)) {
    std::vector<int64_t> axes = {0};
    for (int64_t a = 2; a < *rank; ++a) axes.push_back(a);
    g.ReduceSum(g.GO(0), axes, false, g.GI(2));
  }
  return Status::Ok();
}

Status MaxPoolGrad(NodeGrad& g) {
  if (g.O(1).empty()) return InternalError("node " + g.node().Describe() + ": MaxPool has no Indices output");
  g.Emit("MaxPoolGrad", {g.GO(0), g.O(1)}, {g.GI(0)}, g.CopyAttrs());
  return Status::Ok();
}

Status AveragePoolGrad(NodeGrad& g) {
  g.Emit("AveragePoolGrad", {g.GO(0)}, {g.GI(0)}, g.CopyAttrs());
  return Status::Ok();
}

}  // namespace
}  // namespace memopt::grad

MEMOPT_OPS(conv, conv_gradients) {
  using namespace memopt::grad;
  ops.SetGrad("", "Conv", {ConvGrad, {}});
  ops.SetGrad("", "ConvTranspose", {ConvTransposeGrad, {}});
  ops.SetGrad("", "MaxPool", {MaxPoolGrad, {}, {{1, "_mask"}}});
  ops.SetGrad("", "AveragePool", {AveragePoolGrad, {}});
}
