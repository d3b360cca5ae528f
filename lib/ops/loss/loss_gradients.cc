// Gradient rules of the losses (ort_training_ops.md §3.24, 3.25): SoftmaxCrossEntropyLoss
// (-> SoftmaxCrossEntropyLossGrad with the log_prob output the builder adds),
// com.microsoft::SoftmaxCrossEntropyLossInternal, and NegativeLogLikelihoodLoss, which ORT has no
// gradient op for: its gradient is a scatter of -weight[target] * scale into the target class,
// written with GatherElementsGrad (scatter-add).
#include "grad/grad_context.h"
#include "ir/op_registry.h"

namespace memopt::grad {
namespace {

Status SoftmaxCrossEntropyGrad(NodeGrad& g) {
  if (g.O(1).empty()) {
    return InternalError("node " + g.node().Describe() + ": SoftmaxCrossEntropyLoss has no log_prob output");
  }
  std::vector<std::string> inputs = {g.GO(0), g.O(1), g.I(1)};
  if (!g.I(2).empty()) inputs.push_back(g.I(2));
  g.Emit("SoftmaxCrossEntropyLossGrad", inputs, {g.GI(0)}, g.CopyAttrs(), kMsDomain);
  return Status::Ok();
}

Status SoftmaxCrossEntropyInternalGrad(NodeGrad& g) {
  std::vector<std::string> inputs = {g.GO(0), g.O(1), g.I(1), g.I(2), g.I(3)};
  while (inputs.back().empty()) inputs.pop_back();
  auto attrs = g.CopyAttrs({"output_type"});
  attrs.push_back(AttrInt("output_type", static_cast<int64_t>(g.Dtype(g.I(0)))));
  g.Emit("SoftmaxCrossEntropyLossInternalGrad", inputs, {g.GI(0)}, attrs, kMsDomain);
  return Status::Ok();
}

/// loss[n,d] = -w[t[n,d]] * input[n, t[n,d], d] (w = 1 without weights; 0 where t == ignore_index),
/// reduced by mean (divided by the sum of w), sum, or none.
Status NllGrad(NodeGrad& g) {
  const DataType t = g.Dtype(g.I(0));
  const std::string target = g.I(1);
  const std::string reduction = g.node().GetString("reduction", "mean");
  const bool has_ignore = g.node().HasAttr("ignore_index");
  std::string safe_target = target;
  std::string keep;  // float mask, 0 where target == ignore_index
  if (has_ignore) {
    const DataType tt = g.Dtype(target);
    const std::string ignore =
        g.Const("ignore_index", MakeTensor(tt, {}, {static_cast<double>(g.node().GetInt("ignore_index", 0))}));
    const std::string ignored = g.Op("Equal", {target, ignore});
    safe_target = g.Op("Where", {ignored, g.Const("zero_index", MakeTensor(tt, {}, {0})), target});
    keep = g.Op("Cast", {g.Op("Not", {ignored})}, {AttrInt("to", static_cast<int64_t>(t))});
  }
  std::string w;  // per-element weight, "" for all ones
  if (!g.I(2).empty()) w = g.Op("Gather", {g.I(2), safe_target}, {AttrInt("axis", 0)});
  if (!keep.empty()) w = w.empty() ? keep : g.Op("Mul", {w, keep});

  std::string coef = g.GO(0);  // scalar for mean/sum, [N, d...] for none
  if (reduction == "mean") {
    std::string total;
    if (w.empty()) {
      auto shape = g.ShapeOf(target);
      std::optional<int64_t> n;
      if (shape) n = NumElements(*shape).AsInt();
      total = n ? g.ScalarConst("Count", t, static_cast<double>(*n))
                : g.Op("Cast", {g.Op("Size", {target})}, {AttrInt("to", static_cast<int64_t>(t))});
    } else {
      total = g.Op("ReduceSum", {w}, {AttrInt("keepdims", 0)});
    }
    coef = g.Op("Div", {coef, total});
  } else if (reduction != "sum" && reduction != "none") {
    return InvalidInput("node " + g.node().Describe() + ": unknown reduction '" + reduction + "'");
  }
  if (!w.empty()) {
    coef = g.Op("Mul", {coef, w});
  } else if (reduction != "none") {
    coef = g.Op("Expand", {coef, g.ShapeOfTensor(target)});
  }
  const std::string neg = g.Op("Neg", {coef});
  const std::string update = g.Tmp("update");
  g.Unsqueeze(neg, {1}, update);
  const std::string index = g.Tmp("target_index");
  g.Unsqueeze(safe_target, {1}, index);
  g.Emit("GatherElementsGrad", {update, g.ShapeOfTensor(g.I(0)), index}, {g.GI(0)}, {AttrInt("axis", 1)},
         kMsDomain);
  return Status::Ok();
}

}  // namespace

static void RegisterLossGradRules(OpRegistry& r) {
  r.SetGrad("", "SoftmaxCrossEntropyLoss", {SoftmaxCrossEntropyGrad, {1, 2}, {{1, "_log_prob", true}}});
  r.SetGrad(kMsDomain, "SoftmaxCrossEntropyLossInternal", {SoftmaxCrossEntropyInternalGrad, {1, 2, 3}, {{1, "_log_prob", true}}});
  r.SetGrad("", "NegativeLogLikelihoodLoss", {NllGrad, {1, 2}});
}

}  // namespace memopt::grad

MEMOPT_OPS(loss, loss_gradients) {
  memopt::grad::RegisterLossGradRules(ops);
}
