// Gradient rules of the index family's ops: Resize (com.microsoft ResizeGrad, whose CPU kernel reads
// the forward's taps backwards: resize_grad_cpu.cc), TopK (the values' gradient scattered back
// to the positions the indices name, GatherElementsGrad along the axis), and ScatterElements /
// ScatterND without reduction or with reduction "add" (data: dY with the written positions zeroed,
// or dY itself for "add"; updates: dY gathered at the indices, as PyTorch's scatter and index_add
// backward read it).
#include "grad/grad_context.h"
#include "ir/op_registry.h"

namespace memopt::grad {
namespace {

Status ResizeGrad(NodeGrad& g) {
  if (g.node().op_type != "Resize" || g.since_version() < 11) {
    return Unsupported("node " + g.node().Describe() +
                       ": no gradient for Resize of opset 10 or Upsample (their scales and nearest rounding differ); "
                       "export with opset 11 or later");
  }
  std::vector<std::string> inputs = {g.GO(0), g.I(0)};
  for (int i = 1; i < g.num_inputs(); ++i) inputs.push_back(g.I(i));  // roi, scales, sizes as the forward has them
  while (inputs.back().empty()) inputs.pop_back();
  g.Emit("ResizeGrad", inputs, {g.GI(0)}, g.CopyAttrs(), kMsDomain);
  return Status::Ok();
}

Status TopKGrad(NodeGrad& g) {
  if (g.O(1).empty()) return InternalError("node " + g.node().Describe() + ": TopK has no Indices output");
  const int64_t axis = g.node().GetInt("axis", -1);
  g.Emit("GatherElementsGrad", {g.GO(0), g.ShapeOfTensor(g.I(0)), g.O(1)}, {g.GI(0)}, {AttrInt("axis", axis)},
         kMsDomain);
  return Status::Ok();
}

Status ScatterGrad(NodeGrad& g) {
  const std::string reduction = g.node().GetString("reduction", "none");
  if (reduction != "none" && reduction != "add") {
    return Unsupported("node " + g.node().Describe() + ": no gradient for " + g.node().op_type + " with reduction '" +
                       reduction + "' (none and add have one)");
  }
  const bool elements = g.node().op_type == "ScatterElements";
  std::vector<onnx::AttributeProto> axis;
  if (elements) axis.push_back(AttrInt("axis", g.node().GetInt("axis", 0)));
  if (g.NeedGI(0)) {
    if (reduction == "add") {
      g.Emit("Identity", {g.GO(0)}, {g.GI(0)});
    } else {  // the positions the updates overwrote get none of dY
      const DataType t = g.Dtype(g.I(2));
      const std::string zeros = g.Op("ConstantOfShape", {g.ShapeOfTensor(g.I(2))},
                                     {AttrTensor("value", MakeTensor(t, {1}, {0}))}, "", g.I(2));
      g.Emit(g.node().op_type, {g.GO(0), g.I(1), zeros}, {g.GI(0)}, axis);
    }
  }
  if (g.NeedGI(2)) g.Emit(elements ? "GatherElements" : "GatherND", {g.GO(0), g.I(1)}, {g.GI(2)}, axis);
  return Status::Ok();
}

}  // namespace
}  // namespace memopt::grad

MEMOPT_OPS(index, index_gradients) {
  using namespace memopt::grad;
  ops.SetGrad("", "Resize", {ResizeGrad, {1, 2, 3}});
  ops.SetGrad("", "TopK", {TopKGrad, {1}});
  ops.SetGrad("", "ScatterElements", {ScatterGrad, {1}});
  ops.SetGrad("", "ScatterND", {ScatterGrad, {1}});
}
