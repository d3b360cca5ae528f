// Gradient rules of convolution and pooling (ort_training_ops.md 3.12, 3.13, 3.22, 3.23): ConvGrad,
// MaxPoolGrad (reading the Indices the builder gives MaxPool before these rules run) and
// AveragePoolGrad.
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
  ops.SetGrad("", "MaxPool", {MaxPoolGrad, {}, {{1, "_mask"}}});
  ops.SetGrad("", "AveragePool", {AveragePoolGrad, {}});
}
