// The gradient rule of BatchNormalization (ort_training_ops.md 3.10, 3.11): BatchNormalizationGrad
// in training mode, plain ops in inference mode. BatchNormalization in training mode has no saved
// statistics among its outputs (ORT rewrites it to BatchNormInternal); the batch mean and inverse
// std are recomputed here from X, which BatchNormalizationGrad reads anyway. In inference mode
// (running statistics) the op is a per-channel affine map and is differentiated with plain ops.
// (The layer normalisations' rules are in layer_norm.cc.)
#include "grad/grad_context.h"
#include "ir/op_registry.h"

namespace memopt::grad {
namespace {

bool BatchNormTraining(const Node& node) {
  if (node.since_version >= 14) return node.GetInt("training_mode", 0) != 0;
  int outputs = 0;
  for (ValueId v : node.outputs) outputs += v != kNone;
  return outputs > 1;
}

/// ReduceMean over `axes` with keepdims=1 (axes as attribute before opset 18).
std::string ReduceMeanKeep(NodeGrad& g, const std::string& x, const std::vector<int64_t>& axes) {
  if (g.opset() < 18) return g.Op("ReduceMean", {x}, {AttrInts("axes", axes), AttrInt("keepdims", 1)});
  return g.Op("ReduceMean", {x, g.Int64Const("stat_axes", axes)}, {AttrInt("keepdims", 1)});
}

Status BatchNormGrad(NodeGrad& g) {
  auto rank = g.Rank(g.I(0));
  if (!rank || *rank < 2) {
    return Unsupported("node " + g.node().Describe() + ": BatchNormalization gradient needs the rank of X");
  }
  std::vector<int64_t> axes = {0};
  for (int64_t i = 2; i < *rank; ++i) axes.push_back(i);
  const DataType t = g.Dtype(g.I(0));
  const float eps = g.node().GetFloat("epsilon", 1e-5f);
  const std::string x = g.I(0), scale = g.I(1), dy = g.GO(0);
  const std::string eps_c = g.ScalarConst("Epsilon", t, eps);
  const std::string flat = g.Int64Const("channels_shape", {-1});

  if (BatchNormTraining(g.node())) {
    const std::string mean_k = ReduceMeanKeep(g, x, axes);
    const std::string centered = g.Op("Sub", {x, mean_k});
    const std::string var_k = ReduceMeanKeep(g, g.Op("Mul", {centered, centered}), axes);
    const std::string inv_k = g.Op("Reciprocal", {g.Op("Sqrt", {g.Op("Add", {var_k, eps_c})})});
    const std::string mean = g.Tmp("saved_mean");
    const std::string inv = g.Tmp("saved_inv_std");
    g.Emit("Reshape", {mean_k, flat}, {mean});
    g.Emit("Reshape", {inv_k, flat}, {inv});
    std::vector<std::string> outs = {g.GIOrTmp(0, true, "X_grad_unused"), g.GIOrTmp(1, false, ""),
                                     g.GIOrTmp(2, false, "")};
    while (outs.back().empty()) outs.pop_back();
    g.Emit("BatchNormalizationGrad", {dy, x, scale, mean, inv}, outs, {AttrFloat("epsilon", eps)}, kMsDomain);
    return Status::Ok();
  }
  // Inference: y = scale * (x - mean) * inv + bias with inv = 1/sqrt(var + eps) per channel.
  std::vector<int64_t> param_shape = {-1};
  for (int64_t i = 2; i < *rank; ++i) param_shape.push_back(1);
  const std::string pshape = g.Int64Const("param_shape", param_shape);
  const std::string inv = g.Op("Reciprocal", {g.Op("Sqrt", {g.Op("Add", {g.I(4), eps_c})})});
  const std::string inv_r = g.Op("Reshape", {inv, pshape});
  if (g.NeedGI(0)) {
    const std::string k = g.Op("Reshape", {g.Op("Mul", {scale, inv}), pshape});
    g.Emit("Mul", {dy, k}, {g.GI(0)});
  }
  if (g.NeedGI(1)) {
    const std::string xhat = g.Op("Mul", {g.Op("Sub", {x, g.Op("Reshape", {g.I(3), pshape})}), inv_r});
    g.ReduceSum(g.Op("Mul", {dy, xhat}), axes, false, g.GI(1));
  }
  if (g.NeedGI(2)) g.ReduceSum(dy, axes, false, g.GI(2));
  return Status::Ok();
}

}  // namespace
}  // namespace memopt::grad

MEMOPT_OPS(norm, norm_gradients) {
  ops.SetGrad("", "BatchNormalization", {memopt::grad::BatchNormGrad, {3, 4}});
}
