// Gradient rules of data-movement ops (ort_training_ops.md §6): Reshape, Flatten, Squeeze,
// Unsqueeze, Transpose, Concat, Split, Slice, Gather, GatherElements, GatherND, Expand, Tile,
// Trilu, Pad. Their shape / index inputs are stop edges. Unlike ORT, Split fills the gradient of
// outputs that get none with zeros, so the concatenated gradient keeps the input's shape.
#include <limits>

#include "grad/grad_context.h"
#include "ir/op_registry.h"

namespace memopt::grad {
namespace {

std::optional<int64_t> NormalizedAxis(NodeGrad& g, const std::string& tensor, int64_t axis) {
  if (axis >= 0) return axis;
  auto rank = g.Rank(tensor);
  if (!rank) return std::nullopt;
  return axis + *rank;
}

/// Reshape(dY, Shape(X)) into GI(0).
void ReshapeBack(NodeGrad& g) {
  std::vector<onnx::AttributeProto> attrs;
  if (auto dims = LiteralShape(g.ShapeOf(g.I(0)))) {
    for (int64_t d : *dims) {
      if (d == 0 && g.opset() >= 14) attrs.push_back(AttrInt("allowzero", 1));
      if (d == 0) break;
    }
  }
  g.Emit("Reshape", {g.GO(0), g.ShapeOfTensor(g.I(0))}, {g.GI(0)}, attrs);
}

Status ReshapeGrad(NodeGrad& g) {
  ReshapeBack(g);
  return Status::Ok();
}

Status SqueezeGrad(NodeGrad& g) {
  if (g.since_version() < 13 && g.node().HasAttr("axes")) {
    g.Unsqueeze(g.GO(0), g.node().GetInts("axes"), g.GI(0));
  } else if (g.since_version() >= 13 && !g.I(1).empty()) {
    g.Emit("Unsqueeze", {g.GO(0), g.I(1)}, {g.GI(0)});
  } else {
    ReshapeBack(g);
  }
  return Status::Ok();
}

Status UnsqueezeGrad(NodeGrad& g) {
  if (g.since_version() < 13) {
    g.Squeeze(g.GO(0), g.node().GetInts("axes"), g.GI(0));
  } else if (auto axes = g.IntValues(g.I(1)); axes.has_value()) {
    // Known axes as a 1-D constant: Unsqueeze takes a scalar axes tensor in ORT (onnxscript's
    // torch_lib writes one), Squeeze does not.
    g.Emit("Squeeze", {g.GO(0), g.Int64Const("axes", *axes)}, {g.GI(0)});
  } else if (g.Rank(g.I(1)) == std::optional<int64_t>(1)) {
    g.Emit("Squeeze", {g.GO(0), g.I(1)}, {g.GI(0)});
  } else {
    g.Emit("Squeeze", {g.GO(0), g.Op("Reshape", {g.I(1), g.Int64Const("minus_one", {-1})})}, {g.GI(0)});
  }
  return Status::Ok();
}

Status TransposeGrad(NodeGrad& g) {
  if (!g.node().HasAttr("perm")) {  // reversed axes: its own inverse
    g.Emit("Transpose", {g.GO(0)}, {g.GI(0)});
    return Status::Ok();
  }
  const std::vector<int64_t> perm = g.node().GetInts("perm");
  std::vector<int64_t> inverse(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) {
    if (perm[i] < 0 || perm[i] >= static_cast<int64_t>(perm.size())) {
      return InvalidInput("node " + g.node().Describe() + ": perm is not a permutation");
    }
    inverse[perm[i]] = static_cast<int64_t>(i);
  }
  g.Emit("Transpose", {g.GO(0)}, {g.GI(0)}, {AttrInts("perm", inverse)});
  return Status::Ok();
}

/// A 1-element int64 tensor with dim `axis` of `tensor`.
std::string DimOf(NodeGrad& g, const std::string& tensor, int64_t axis) {
  auto shape = g.ShapeOf(tensor);
  if (shape && axis < static_cast<int64_t>(shape->size())) {
    if (auto d = (*shape)[axis].AsInt()) return g.Int64Const(tensor + "_dim" + std::to_string(axis), {*d});
  }
  const std::string index = g.Int64Const("axis_" + std::to_string(axis), {axis});
  return g.Op("Gather", {g.ShapeOfTensor(tensor), index}, {AttrInt("axis", 0)});
}

Status ConcatGrad(NodeGrad& g) {
  auto axis = NormalizedAxis(g, g.O(0), g.node().GetInt("axis", 0));
  if (!axis) return Unsupported("node " + g.node().Describe() + ": Concat gradient needs the rank of the output");
  const int n = g.num_inputs();
  std::vector<std::optional<int64_t>> sizes(n);
  bool all_static = true;
  for (int i = 0; i < n; ++i) {
    auto s = g.ShapeOf(g.I(i));
    if (s && *axis < static_cast<int64_t>(s->size())) sizes[i] = (*s)[*axis].AsInt();
    all_static = all_static && sizes[i].has_value();
  }
  std::vector<std::string> outs(n);
  for (int i = 0; i < n; ++i) outs[i] = g.NeedGI(i) ? g.GI(i) : g.Tmp("unused_split_" + std::to_string(i));
  if (all_static) {
    std::vector<int64_t> split;
    for (auto& s : sizes) split.push_back(*s);
    if (g.opset() < 13) {
      g.Emit("Split", {g.GO(0)}, outs, {AttrInt("axis", *axis), AttrInts("split", split)});
    } else {
      g.Emit("Split", {g.GO(0), g.Int64Const("split_sizes", split)}, outs, {AttrInt("axis", *axis)});
    }
    return Status::Ok();
  }
  if (g.opset() >= 13) {
    std::vector<std::string> dims;
    for (int i = 0; i < n; ++i) dims.push_back(DimOf(g, g.I(i), *axis));
    const std::string split = g.Op("Concat", dims, {AttrInt("axis", 0)});
    g.Emit("Split", {g.GO(0), split}, outs, {AttrInt("axis", *axis)});
    return Status::Ok();
  }
  // Opset < 13 takes split sizes only as an attribute: slice each wanted piece instead.
  const std::string axes = g.Int64Const("slice_axes", {*axis});
  std::string start = g.Int64Const("zero_int64", {0});
  for (int i = 0; i < n; ++i) {
    const std::string len = DimOf(g, g.I(i), *axis);
    const std::string end = g.Op("Add", {start, len});
    if (g.NeedGI(i)) g.Emit("Slice", {g.GO(0), start, end, axes}, {g.GI(i)});
    start = end;
  }
  return Status::Ok();
}

Status SplitGrad(NodeGrad& g) {
  auto axis = NormalizedAxis(g, g.I(0), g.node().GetInt("axis", 0));
  if (!axis) return Unsupported("node " + g.node().Describe() + ": Split gradient needs the rank of the input");
  std::vector<std::string> parts;
  for (int j = 0; j < g.num_outputs(); ++j) {
    if (g.HasGO(j)) {
      parts.push_back(g.GO(j));
      continue;
    }
    const DataType t = g.Dtype(g.O(j));
    parts.push_back(g.Op("ConstantOfShape", {g.ShapeOfTensor(g.O(j))}, {AttrTensor("value", MakeTensor(t, {1}, {0}))},
                         "", g.O(j)));
  }
  g.Emit("Concat", parts, {g.GI(0)}, {AttrInt("axis", *axis)});
  return Status::Ok();
}

Status SliceGrad(NodeGrad& g) {
  std::vector<std::string> inputs = {g.GO(0), g.ShapeOfTensor(g.I(0))};
  if (g.since_version() < 10) {
    inputs.push_back(g.Int64Const("starts", g.node().GetInts("starts")));
    inputs.push_back(g.Int64Const("ends", g.node().GetInts("ends")));
    if (g.node().HasAttr("axes")) inputs.push_back(g.Int64Const("axes", g.node().GetInts("axes")));
  } else {
    for (int i = 1; i <= 4; ++i) inputs.push_back(g.I(i));
    while (inputs.back().empty()) inputs.pop_back();
  }
  g.Emit("SliceGrad", inputs, {g.GI(0)}, {}, kMsDomain);
  return Status::Ok();
}

Status GatherGrad(NodeGrad& g) {
  g.Emit("GatherGrad", {g.ShapeOfTensor(g.I(0)), g.I(1), g.GO(0)}, {g.GI(0)},
         {AttrInt("axis", g.node().GetInt("axis", 0))}, kMsDomain);
  return Status::Ok();
}

Status GatherElementsGrad(NodeGrad& g) {
  g.Emit("GatherElementsGrad", {g.GO(0), g.ShapeOfTensor(g.I(0)), g.I(1)}, {g.GI(0)},
         {AttrInt("axis", g.node().GetInt("axis", 0))}, kMsDomain);
  return Status::Ok();
}

Status GatherNDGrad(NodeGrad& g) {
  g.Emit("GatherNDGrad", {g.ShapeOfTensor(g.I(0)), g.I(1), g.GO(0)}, {g.GI(0)},
         {AttrInt("batch_dims", g.node().GetInt("batch_dims", 0))}, kMsDomain);
  return Status::Ok();
}

Status ExpandGrad(NodeGrad& g) {
  g.ReduceTo(g.GO(0), g.ShapeOf(g.O(0)), g.I(0), g.GI(0));
  return Status::Ok();
}

/// Tile: view dY as [r0, d0, r1, d1, ...] and sum over the repeat axes (repeats must be known).
Status TileGrad(NodeGrad& g) {
  auto repeats = g.IntValues(g.I(1));
  auto rank = g.Rank(g.I(0));
  if (!repeats || !rank || static_cast<int64_t>(repeats->size()) != *rank) {
    return Unsupported("node " + g.node().Describe() + ": Tile gradient needs constant repeats and the input rank");
  }
  std::vector<std::string> pieces;
  std::vector<int64_t> axes;
  for (int64_t i = 0; i < *rank; ++i) {
    pieces.push_back(g.Int64Const("repeat_" + std::to_string(i), {(*repeats)[i]}));
    pieces.push_back(DimOf(g, g.I(0), i));
    axes.push_back(2 * i);
  }
  const std::string shape = g.Op("Concat", pieces, {AttrInt("axis", 0)});
  const std::string split = g.Op("Reshape", {g.GO(0), shape});
  g.ReduceSum(split, axes, false, g.GI(0));
  return Status::Ok();
}

Status TriluGrad(NodeGrad& g) {
  std::vector<std::string> inputs = {g.GO(0)};
  if (!g.I(1).empty()) inputs.push_back(g.I(1));
  g.Emit("Trilu", inputs, {g.GI(0)}, g.CopyAttrs(), g.node().domain);
  return Status::Ok();
}

/// Constant-mode Pad with known non-negative pads: the gradient is the un-padded slice of dY.
Status PadGrad(NodeGrad& g) {
  if (g.node().GetString("mode", "constant") != "constant") {
    return Unsupported("node " + g.node().Describe() + ": gradient of Pad mode '" + g.node().GetString("mode", "") +
                       "' is not supported (only 'constant')");
  }
  std::optional<std::vector<int64_t>> pads =
      g.since_version() < 11 ? std::optional(g.node().GetInts("pads")) : g.IntValues(g.I(1));
  auto rank = g.Rank(g.I(0));
  if (!pads || !rank) return Unsupported("node " + g.node().Describe() + ": Pad gradient needs constant pads");
  std::vector<int64_t> axes;
  if (g.since_version() >= 18 && !g.I(3).empty()) {
    auto a = g.IntValues(g.I(3));
    if (!a) return Unsupported("node " + g.node().Describe() + ": Pad gradient needs constant axes");
    for (int64_t x : *a) axes.push_back(x < 0 ? x + *rank : x);
  } else {
    for (int64_t i = 0; i < *rank; ++i) axes.push_back(i);
  }
  const size_t n = axes.size();
  if (pads->size() != 2 * n) return InvalidInput("node " + g.node().Describe() + ": pads has the wrong length");
  std::vector<int64_t> starts, ends;
  for (size_t i = 0; i < n; ++i) {
    const int64_t begin = (*pads)[i], end = (*pads)[n + i];
    if (begin < 0 || end < 0) {
      return Unsupported("node " + g.node().Describe() + ": gradient of Pad with negative pads is not supported");
    }
    starts.push_back(begin);
    ends.push_back(end == 0 ? std::numeric_limits<int64_t>::max() : -end);
  }
  g.Emit("Slice", {g.GO(0), g.Int64Const("starts", starts), g.Int64Const("ends", ends), g.Int64Const("axes", axes)},
         {g.GI(0)});
  return Status::Ok();
}

}  // namespace

static void RegisterShapeGradRules(OpRegistry& r) {
  r.SetGrad("", "Reshape", {ReshapeGrad, {1}});
  r.SetGrad("", "Flatten", {ReshapeGrad, {}});
  r.SetGrad("", "Squeeze", {SqueezeGrad, {1}});
  r.SetGrad("", "Unsqueeze", {UnsqueezeGrad, {1}});
  r.SetGrad("", "Transpose", {TransposeGrad, {}});
  r.SetGrad("", "Concat", {ConcatGrad, {}});
  r.SetGrad("", "Split", {SplitGrad, {1}});
  r.SetGrad("", "Slice", {SliceGrad, {1, 2, 3, 4}});
  r.SetGrad("", "Gather", {GatherGrad, {1}});
  r.SetGrad("", "GatherElements", {GatherElementsGrad, {1}});
  r.SetGrad("", "GatherND", {GatherNDGrad, {1}});
  r.SetGrad("", "Expand", {ExpandGrad, {1}});
  r.SetGrad("", "Tile", {TileGrad, {1}});
  r.SetGrad("", "Trilu", {TriluGrad, {1}});
  r.SetGrad(kMsDomain, "Trilu", {TriluGrad, {1}});
  r.SetGrad("", "Pad", {PadGrad, {1, 2, 3}});
}

}  // namespace memopt::grad

MEMOPT_OPS(layout, layout_gradients) {
  memopt::grad::RegisterShapeGradRules(ops);
}
