// The Dropout family (ort_training_ops.md 2.6-2.8, 3.14, 3.15): ONNX Dropout (every opset),
// com.microsoft BitmaskDropout, BiasDropout, BitmaskBiasDropout, DropoutGrad and
// BitmaskDropoutGrad.
//
// Each op's whole definition: the decode every backend calls (dropout.h), shape rules, Dropout's
// gradient rule with the mask it saves, and cost classes; the CPU kernels register in dropout_cpu.cc.
// Masks are Philox words keyed by the node's seed (exec/dropout_seed.h), the same on every backend.
// The fused BiasSoftmaxDropout lives with the softmax family.
#include "ops/dropout/dropout.h"

#include <string>

#include "exec/kernels/decode_inputs.h"
#include "grad/grad_context.h"
#include "ir/op_registry.h"
#include "shape/infer_context.h"

namespace memopt {
namespace dropout {

namespace {

Expected<bool> ReadBool(const ScalarReader& scalar, int i, bool def) {
  MEMOPT_ASSIGN_OR_RETURN(double v, scalar(i, def ? 1.0 : 0.0));
  return v != 0.0;
}

Status CheckRatio(double ratio) {
  if (!(ratio >= 0.0 && ratio <= 1.0)) {
    return InvalidInput("dropout ratio " + std::to_string(ratio) + " is outside [0, 1]");
  }
  return Status::Ok();
}

/// Ratio input i (default 0.5), read only when training mode uses it.
Status ReadModeAndRatio(const ScalarReader& scalar, int ratio_input, int mode_input, bool mode_default, bool& training,
                        float& ratio) {
  MEMOPT_ASSIGN_OR_RETURN(training, ReadBool(scalar, mode_input, mode_default));
  ratio = 0.0f;
  if (!training) return Status::Ok();
  MEMOPT_ASSIGN_OR_RETURN(double r, scalar(ratio_input, 0.5));
  MEMOPT_RETURN_IF_ERROR(CheckRatio(r));
  ratio = static_cast<float>(r);
  return Status::Ok();
}

}  // namespace

Expected<DropoutPlan> DecodeDropout(const Node& node, const std::vector<const Tensor*>& inputs,
                                    const ScalarReader& scalar) {
  DropoutPlan p;
  const Tensor* data = InputAt(inputs, 0);
  if (data == nullptr) return InvalidInput("input data is missing");
  if (node.domain.empty()) {
    // ONNX Dropout. Opset 1/6: attributes ratio and is_test (0 = training), mask of the data type.
    // Opset 7-11: inference only (mask of the data type before 10, bool from 10). Opset 12+: inputs
    // ratio and training_mode, bool mask.
    const int version = node.since_version == 0 ? 13 : node.since_version;
    if (version >= 12) {
      MEMOPT_RETURN_IF_ERROR(ReadModeAndRatio(scalar, 1, 2, false, p.training, p.ratio));
    } else {
      p.training = version < 7 && node.GetInt("is_test", 0) == 0;
      p.mask = version < 10 ? MaskKind::kData : MaskKind::kBool;
      if (p.training) {
        const float ratio = node.GetFloat("ratio", 0.5f);
        MEMOPT_RETURN_IF_ERROR(CheckRatio(ratio));
        p.ratio = ratio;
      }
    }
    return p;
  }
  // BitmaskDropout(data, ratio?, training_mode?) and, with a bias, BiasDropout /
  // BitmaskBiasDropout(data, bias, residual?, ratio?, training_mode?).
  const bool with_bias = node.op_type != "BitmaskDropout";
  p.mask = node.op_type == "BiasDropout" ? MaskKind::kBool : MaskKind::kBitmask;
  if (with_bias) {
    const Tensor* bias = InputAt(inputs, 1);
    if (bias == nullptr) return InvalidInput("input bias is missing");
    if (bias->numel() == 0 || data->numel() % bias->numel() != 0 || bias->dtype() != data->dtype()) {
      return InvalidInput("bias " + bias->Describe() + " does not broadcast onto data " + data->Describe());
    }
    p.bias = 1;
    if (const Tensor* res = InputAt(inputs, 2)) {
      if (res->numel() != data->numel() || res->dtype() != data->dtype()) {
        return InvalidInput("residual " + res->Describe() + " must have the shape and type of data " +
                            data->Describe());
      }
      p.residual = 2;
    }
  }
  const int ratio_input = with_bias ? 3 : 1;
  MEMOPT_RETURN_IF_ERROR(ReadModeAndRatio(scalar, ratio_input, ratio_input + 1, false, p.training, p.ratio));
  return p;
}

Expected<DropoutGradPlan> DecodeDropoutGrad(const Node& node, const std::vector<const Tensor*>& inputs,
                                            const ScalarReader& scalar) {
  DropoutGradPlan p;
  p.bitmask = node.op_type == "BitmaskDropoutGrad";
  const Tensor* dy = InputAt(inputs, 0);
  const Tensor* mask = InputAt(inputs, 1);
  if (dy == nullptr) return InvalidInput("input dy is missing");
  if (mask == nullptr) return InvalidInput("input mask is missing");
  const int64_t n = dy->numel();
  if (p.bitmask) {
    if (mask->dtype() != DataType::kUint32 || mask->numel() != (n + 31) / 32) {
      return InvalidInput("mask " + mask->Describe() + " must be uint32 with ceil(" + std::to_string(n) +
                          "/32) elements for dy " + dy->Describe());
    }
  } else if (mask->dtype() != DataType::kBool || mask->numel() != n) {
    return InvalidInput("mask " + mask->Describe() + " must be bool with the shape of dy " + dy->Describe());
  }
  bool training = false;
  MEMOPT_RETURN_IF_ERROR(ReadModeAndRatio(scalar, 2, 3, !p.bitmask, training, p.ratio));
  return p;
}

namespace {

// ---- shape rules ----

/// Dropout: output = data; mask (optional) has data's shape, bool (T before opset 10).
Status DropoutShape(shape::InferContext& ctx) {
  ctx.CopyInputToOutput(0, 0);
  if (ctx.HasOutput(1)) {
    const DataType mask_type = (ctx.node().domain.empty() && ctx.opset() < 10) ? ctx.InputType(0) : DataType::kBool;
    const Shape* s = ctx.InputShape(0);
    ctx.SetOutput(1, mask_type, s ? std::optional<Shape>(*s) : std::nullopt);
  }
  return Status::Ok();
}

/// BitmaskDropout / BitmaskBiasDropout: output = data; mask uint32 [ceil(numel / 32)].
Status BitmaskDropoutShape(shape::InferContext& ctx) {
  ctx.CopyInputToOutput(0, 0);
  if (!ctx.HasOutput(1)) return Status::Ok();
  const Shape* s = ctx.InputShape(0);
  if (s == nullptr) {
    ctx.SetOutput(1, DataType::kUint32, ctx.FreshShape(1, 1, "bitmask length needs the data shape"));
    return Status::Ok();
  }
  ctx.SetOutput(1, DataType::kUint32, Shape{SymExpr::CeilDiv(NumElements(*s), SymExpr(32))});
  return Status::Ok();
}

/// DropoutGrad / BitmaskDropoutGrad: dx has dy's type and shape.
Status DropoutGradShape(shape::InferContext& ctx) {
  ctx.CopyInputToOutput(0, 0);
  return Status::Ok();
}

// ---- gradient rule ----

/// Dropout: inference (no training_mode input, a constant false one, or opset < 12) is the
/// identity; training uses DropoutGrad(dY, mask, ratio, training_mode) with the forward mask.
Status DropoutGradRule(grad::NodeGrad& g) {
  if (g.O(1).empty()) {  // the builder adds the mask whenever training mode is possible
    g.Emit("Identity", {g.GO(0)}, {g.GI(0)});
    return Status::Ok();
  }
  std::string ratio = g.I(1);
  if (g.since_version() < 12) {
    ratio = g.ScalarConst("Ratio", g.Dtype(g.I(0)), g.node().GetFloat("ratio", 0.5f));
  }
  std::vector<std::string> inputs = {g.GO(0), g.O(1), ratio};
  if (!g.I(2).empty()) inputs.push_back(g.I(2));
  while (!inputs.empty() && inputs.back().empty()) inputs.pop_back();
  g.Emit("DropoutGrad", inputs, {g.GI(0)}, {}, grad::kMsDomain);
  return Status::Ok();
}

/// Whether a Dropout node may run in training mode (then its gradient needs the mask).
bool DropoutMayTrain(const Graph& graph, const Node& node) {
  if (node.domain != "" || node.op_type != "Dropout") return false;
  if (node.since_version != 0 && node.since_version < 12) return false;
  if (node.inputs.size() < 3 || node.inputs[2] == kNone) return false;
  const Value& mode = graph.value(node.inputs[2]);
  if (mode.known_values && mode.known_values->size() == 1) {
    auto v = (*mode.known_values)[0].AsInt();
    if (v && *v == 0) return false;
  }
  return true;
}

}  // namespace
}  // namespace dropout
}  // namespace memopt

MEMOPT_OPS(dropout, dropout) {
  using namespace memopt;
  const CostClass cost{CostKind::kElementwise, 3};

  ops.SetShape("", "Dropout", dropout::DropoutShape);
  ops.SetGrad("", "Dropout", {dropout::DropoutGradRule, {1, 2}, {{1, "_mask", false, dropout::DropoutMayTrain}}});
  ops.SetCost("", "Dropout", cost);

  ops.SetShape(kMicrosoftDomain, "BiasDropout", dropout::DropoutShape);
  ops.SetShape(kMicrosoftDomain, "BitmaskDropout", dropout::BitmaskDropoutShape);
  ops.SetShape(kMicrosoftDomain, "BitmaskBiasDropout", dropout::BitmaskDropoutShape);
  for (const char* op : {"BiasDropout", "BitmaskDropout", "BitmaskBiasDropout"}) {
    ops.SetCost(kMicrosoftDomain, op, cost);
  }
  for (const char* op : {"DropoutGrad", "BitmaskDropoutGrad"}) {
    ops.SetShape(kMicrosoftDomain, op, dropout::DropoutGradShape);
  }
}
