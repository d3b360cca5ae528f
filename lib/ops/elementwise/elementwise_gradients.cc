// Gradient rules of element-wise arithmetic with numpy broadcasting (ort_training_ops.md §6):
// Add, Sub, Mul, Div, Pow, Sqrt, Neg, Exp, Log, Erf, Reciprocal, Abs, Sin, Cos, Where, Cast,
// Identity, Clip, Min, Max, Sum, Mean. Broadcast operands get their gradient summed back to their
// shape (NodeGrad::ReduceTo); unlike ORT, Where reduces too.
#include <cmath>

#include "grad/grad_context.h"
#include "ir/op_registry.h"

namespace memopt::grad {
namespace {

/// Gradient `grad` (shaped like output 0) reduced to input i's shape into GI(i).
void ToInput(NodeGrad& g, const std::string& grad, int i) {
  g.ReduceTo(grad, g.ShapeOf(g.O(0)), g.I(i), g.GI(i));
}

Status AddGrad(NodeGrad& g) {
  for (int i = 0; i < 2; ++i) {
    if (g.NeedGI(i)) ToInput(g, g.GO(0), i);
  }
  return Status::Ok();
}

Status SubGrad(NodeGrad& g) {
  if (g.NeedGI(0)) ToInput(g, g.GO(0), 0);
  if (g.NeedGI(1)) {
    const std::string reduced = g.Tmp("ReshapeReduceSum_1");
    g.ReduceTo(g.GO(0), g.ShapeOf(g.O(0)), g.I(1), reduced);
    g.Emit("Neg", {reduced}, {g.GI(1)});
  }
  return Status::Ok();
}

Status MulGrad(NodeGrad& g) {
  for (int i = 0; i < 2; ++i) {
    if (!g.NeedGI(i)) continue;
    const std::string pre = g.Tmp("PreReduceGrad" + std::to_string(i));
    g.Emit("Mul", {g.GO(0), g.I(1 - i)}, {pre});
    ToInput(g, pre, i);
  }
  return Status::Ok();
}

Status DivGrad(NodeGrad& g) {
  if (g.NeedGI(0) && g.NeedGI(1)) {
    g.Emit("DivGrad", {g.GO(0), g.I(0), g.I(1)}, {g.GI(0), g.GI(1)}, {}, kMsDomain);
  } else if (g.NeedGI(0)) {
    const std::string pre = g.Tmp("PreReduceGrad0");
    g.Emit("Div", {g.GO(0), g.I(1)}, {pre});
    ToInput(g, pre, 0);
  } else if (g.NeedGI(1)) {
    g.Emit("DivGrad", {g.GO(0), g.I(0), g.I(1)}, {"", g.GI(1)}, {}, kMsDomain);
  }
  return Status::Ok();
}

/// d(X^E)/dX = E * X^(E-1); d(X^E)/dE = X^E * ln(X), taken as 0 where X == 0 (as PyTorch does).
/// ORT makes the exponent a stop edge; here a float exponent that depends on a trainable tensor
/// gets its gradient too.
Status PowGrad(NodeGrad& g) {
  const DataType xt = g.Dtype(g.I(0));
  const DataType et = g.Dtype(g.I(1));
  if (g.NeedGI(0)) {
    std::string e = g.I(1);
    if (et != xt) e = g.Op("Cast", {e}, {AttrInt("to", static_cast<int64_t>(xt))});
    const std::string e_minus_1 = g.Op("Sub", {e, g.SharedConst("One", xt, 1.0)});
    const std::string pow = g.Op("Pow", {g.I(0), e_minus_1});
    const std::string scaled = g.Op("Mul", {pow, e});
    const std::string pre = g.Tmp("PreReduceGrad0");
    g.Emit("Mul", {scaled, g.GO(0)}, {pre});
    ToInput(g, pre, 0);
  }
  if (g.NeedGI(1)) {
    const std::string zero = g.SharedConst("Zero", xt, 0.0);
    const std::string term = g.Op("Mul", {g.Op("Mul", {g.GO(0), g.O(0)}), g.Op("Log", {g.I(0)})});
    const std::string pre = g.Tmp("PreReduceGrad1");
    g.Emit("Where", {g.Op("Equal", {g.I(0), zero}), zero, term}, {pre});
    if (et == xt) {
      ToInput(g, pre, 1);
    } else {
      const std::string reduced = g.Tmp("ReducedGrad1");
      g.ReduceTo(pre, g.ShapeOf(g.O(0)), g.I(1), reduced);
      g.Emit("Cast", {reduced}, {g.GI(1)}, {AttrInt("to", static_cast<int64_t>(et))});
    }
  }
  return Status::Ok();
}

Status SqrtGrad(NodeGrad& g) {  // dX = dY * 0.5 / Y
  const std::string half = g.SharedConst("Half", g.Dtype(g.O(0)), 0.5);
  g.Emit("Mul", {g.GO(0), g.Op("Div", {half, g.O(0)})}, {g.GI(0)});
  return Status::Ok();
}

Status NegGrad(NodeGrad& g) {
  g.Emit("Neg", {g.GO(0)}, {g.GI(0)});
  return Status::Ok();
}

Status ExpGrad(NodeGrad& g) {
  g.Emit("Mul", {g.GO(0), g.O(0)}, {g.GI(0)});
  return Status::Ok();
}

Status LogGrad(NodeGrad& g) {
  g.Emit("Div", {g.GO(0), g.I(0)}, {g.GI(0)});
  return Status::Ok();
}

Status ErfGrad(NodeGrad& g) {  // dX = dY * 2/sqrt(pi) * exp(-X^2)
  const DataType t = g.Dtype(g.I(0));
  const std::string sq = g.Op("Mul", {g.I(0), g.I(0)});
  const std::string e = g.Op("Exp", {g.Op("Neg", {sq})});
  const std::string scale = g.ScalarConst("Two_Sqrt_Pi", t, 2.0 / std::sqrt(M_PI));
  g.Emit("Mul", {g.GO(0), g.Op("Mul", {e, scale})}, {g.GI(0)});
  return Status::Ok();
}

Status ReciprocalGrad(NodeGrad& g) {  // dX = -dY * Y^2
  const std::string sq = g.Op("Mul", {g.O(0), g.O(0)});
  g.Emit("Mul", {g.GO(0), g.Op("Neg", {sq})}, {g.GI(0)});
  return Status::Ok();
}

Status AbsGrad(NodeGrad& g) {
  g.Emit("Mul", {g.GO(0), g.Op("Sign", {g.I(0)})}, {g.GI(0)});
  return Status::Ok();
}

Status SinGrad(NodeGrad& g) {
  g.Emit("Mul", {g.GO(0), g.Op("Cos", {g.I(0)})}, {g.GI(0)});
  return Status::Ok();
}

Status CosGrad(NodeGrad& g) {
  g.Emit("Mul", {g.GO(0), g.Op("Neg", {g.Op("Sin", {g.I(0)})})}, {g.GI(0)});
  return Status::Ok();
}

Status IdentityGrad(NodeGrad& g) {
  g.Emit("Identity", {g.GO(0)}, {g.GI(0)});
  return Status::Ok();
}

Status CastGrad(NodeGrad& g) {
  g.Emit("Cast", {g.GO(0)}, {g.GI(0)}, {AttrInt("to", static_cast<int64_t>(g.Dtype(g.I(0))))});
  return Status::Ok();
}

/// Where(C, X, Y): dX = Where(C, dY, 0), dY = Where(C, 0, dY), each reduced to its operand's
/// shape (ORT skips the reduction, which is wrong when X or Y was broadcast).
Status WhereGrad(NodeGrad& g) {
  const std::string zero = g.SharedConst("Zero", g.Dtype(g.O(0)), 0.0);
  for (int i = 1; i <= 2; ++i) {
    if (!g.NeedGI(i)) continue;
    const std::string pre = g.Tmp("PreReduceGrad" + std::to_string(i));
    if (i == 1) {
      g.Emit("Where", {g.I(0), g.GO(0), zero}, {pre});
    } else {
      g.Emit("Where", {g.I(0), zero, g.GO(0)}, {pre});
    }
    ToInput(g, pre, i);
  }
  return Status::Ok();
}

/// dX = dY where min <= X <= max (bounds from inputs since opset 11, attributes before).
Status ClipGrad(NodeGrad& g) {
  const DataType t = g.Dtype(g.I(0));
  std::string lo = g.I(1), hi = g.I(2);
  if (g.since_version() < 11) {
    if (g.node().HasAttr("min")) lo = g.ScalarConst("Min", t, g.node().GetFloat("min", 0));
    if (g.node().HasAttr("max")) hi = g.ScalarConst("Max", t, g.node().GetFloat("max", 0));
  }
  if (lo.empty() && hi.empty()) {
    g.Emit("Identity", {g.GO(0)}, {g.GI(0)});
    return Status::Ok();
  }
  auto ge = [&](const std::string& a, const std::string& b) {  // a >= b
    if (g.opset() >= 12) return g.Op("GreaterOrEqual", {a, b});
    return g.Op("Not", {g.Op("Less", {a, b})});
  };
  std::string mask;
  if (!lo.empty()) mask = ge(g.I(0), lo);
  if (!hi.empty()) {
    const std::string upper = ge(hi, g.I(0));
    mask = mask.empty() ? upper : g.Op("And", {mask, upper});
  }
  const std::string mask_f = g.Op("Cast", {mask}, {AttrInt("to", static_cast<int64_t>(t))});
  g.Emit("Mul", {g.GO(0), mask_f}, {g.GI(0)});
  return Status::Ok();
}

/// Min / Max over n inputs: the gradient goes to the inputs equal to the result, split evenly
/// between ties.
Status MinMaxGrad(NodeGrad& g) {
  if (g.num_inputs() == 1) {
    g.Emit("Identity", {g.GO(0)}, {g.GI(0)});
    return Status::Ok();
  }
  const DataType t = g.Dtype(g.O(0));
  std::vector<std::string> masks;
  for (int i = 0; i < g.num_inputs(); ++i) {
    const std::string eq = g.Op("Equal", {g.I(i), g.O(0)});
    masks.push_back(g.Op("Cast", {eq}, {AttrInt("to", static_cast<int64_t>(t))}));
  }
  const std::string count = g.Op("Sum", masks);
  const std::string share = g.Op("Div", {g.GO(0), count});
  for (int i = 0; i < g.num_inputs(); ++i) {
    if (!g.NeedGI(i)) continue;
    const std::string pre = g.Tmp("PreReduceGrad" + std::to_string(i));
    g.Emit("Mul", {share, masks[i]}, {pre});
    ToInput(g, pre, i);
  }
  return Status::Ok();
}

Status SumGrad(NodeGrad& g) {
  for (int i = 0; i < g.num_inputs(); ++i) {
    if (g.NeedGI(i)) ToInput(g, g.GO(0), i);
  }
  return Status::Ok();
}

Status MeanGrad(NodeGrad& g) {
  const std::string n = g.ScalarConst("Count", g.Dtype(g.O(0)), g.num_inputs());
  const std::string share = g.Op("Div", {g.GO(0), n});
  for (int i = 0; i < g.num_inputs(); ++i) {
    if (g.NeedGI(i)) ToInput(g, share, i);
  }
  return Status::Ok();
}

}  // namespace

static void RegisterElementwiseGradRules(OpRegistry& r) {
  r.SetGrad("", "Add", {AddGrad, {}});
  r.SetGrad("", "Sub", {SubGrad, {}});
  r.SetGrad("", "Mul", {MulGrad, {}});
  r.SetGrad("", "Div", {DivGrad, {}});
  r.SetGrad("", "Pow", {PowGrad, {}});
  r.SetGrad("", "Sqrt", {SqrtGrad, {}});
  r.SetGrad("", "Neg", {NegGrad, {}});
  r.SetGrad("", "Exp", {ExpGrad, {}});
  r.SetGrad("", "Log", {LogGrad, {}});
  r.SetGrad("", "Erf", {ErfGrad, {}});
  r.SetGrad("", "Reciprocal", {ReciprocalGrad, {}});
  r.SetGrad("", "Abs", {AbsGrad, {}});
  r.SetGrad("", "Sin", {SinGrad, {}});
  r.SetGrad("", "Cos", {CosGrad, {}});
  r.SetGrad("", "Identity", {IdentityGrad, {}});
  r.SetGrad("", "Cast", {CastGrad, {}});
  r.SetGrad("", "CastLike", {CastGrad, {1}});  // dX = Cast(dY) back to X's type; the type source gets none
  r.SetGrad("", "Where", {WhereGrad, {0}});
  r.SetGrad("", "Clip", {ClipGrad, {1, 2}});
  r.SetGrad("", "Min", {MinMaxGrad, {}});
  r.SetGrad("", "Max", {MinMaxGrad, {}});
  r.SetGrad("", "Sum", {SumGrad, {}});
  r.SetGrad("", "Mean", {MeanGrad, {}});
}

}  // namespace memopt::grad

MEMOPT_OPS(elementwise, elementwise_gradients) {
  memopt::grad::RegisterElementwiseGradRules(ops);
}
