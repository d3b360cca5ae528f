// Gradient rules of reductions: ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceSumSquare,
// ReduceL2, ReduceLogSumExp, GlobalAveragePool. Axes come from the attribute (ReduceSum before
// opset 13, the others before 18) or from input 1 (ORT's ReduceMean rule reads only the
// attribute; here both work). dY is unsqueezed back to rank (keepdims=0) and broadcast to X.
#include "grad/grad_context.h"
#include "ir/op_registry.h"

namespace memopt::grad {
namespace {

struct ReduceAxes {
  bool all = false;                    ///< reduce every axis (no axes given)
  bool identity = false;               ///< no axes and noop_with_empty_axes=1
  std::optional<std::vector<int64_t>> axes;  ///< known axes (normalized when the rank is known)
  std::string axes_input;              ///< axes tensor (opset >= 13/18) when not known
};

ReduceAxes ReadAxes(NodeGrad& g) {
  ReduceAxes r;
  const bool from_input = g.node().op_type == "ReduceSum" ? g.since_version() >= 13 : g.since_version() >= 18;
  if (from_input) {
    if (g.I(1).empty()) {
      r.all = true;
    } else if (auto v = g.IntValues(g.I(1))) {
      if (v->empty()) {
        r.all = true;
      } else {
        r.axes = v;
      }
    } else {
      r.axes_input = g.I(1);
    }
  } else if (g.node().HasAttr("axes")) {
    r.axes = g.node().GetInts("axes");
  } else {
    r.all = true;
  }
  if (r.all && from_input && g.node().GetInt("noop_with_empty_axes", 0) != 0) r.identity = true;
  if (r.axes) {
    if (auto rank = g.Rank(g.I(0))) {
      for (int64_t& a : *r.axes) a = a < 0 ? a + *rank : a;
    }
  }
  return r;
}

/// `t` (shaped like Y) brought back to X's rank: unsqueezed at the reduced axes when keepdims=0.
/// Reducing every axis with keepdims=0 gives a scalar, which broadcasts as it is.
Expected<std::string> Unreduce(NodeGrad& g, const ReduceAxes& r, const std::string& t, const std::string& suffix) {
  if (g.node().GetInt("keepdims", 1) != 0 || r.all) return t;
  const std::string out = g.Tmp(suffix);
  if (r.axes) {
    g.Unsqueeze(t, *r.axes, out);
  } else if (g.opset() >= 13) {
    g.Emit("Unsqueeze", {t, r.axes_input}, {out});
  } else {
    return Unsupported("node " + g.node().Describe() + ": reduction axes are not constant");
  }
  return out;
}

/// Number of reduced elements per output element, as a scalar of X's type.
std::string ReducedCount(NodeGrad& g, const ReduceAxes& r) {
  const DataType t = g.Dtype(g.I(0));
  auto sx = g.ShapeOf(g.I(0));
  if (sx) {
    std::vector<int64_t> axes;
    if (r.all) {
      for (size_t i = 0; i < sx->size(); ++i) axes.push_back(static_cast<int64_t>(i));
    } else if (r.axes) {
      axes = *r.axes;
    }
    if (r.all || r.axes) {
      SymExpr count(1);
      for (int64_t a : axes) {
        if (a >= 0 && a < static_cast<int64_t>(sx->size())) count *= (*sx)[a];
      }
      if (auto c = count.AsInt()) return g.ScalarConst("Scale", t, static_cast<double>(*c));
      std::string dims = g.ShapeOfTensor(g.I(0));
      if (!r.all) dims = g.Op("Gather", {dims, g.Int64Const("reduced_axes", axes)}, {AttrInt("axis", 0)});
      const std::string prod = g.Op("ReduceProd", {dims}, {AttrInt("keepdims", 0)});
      return g.Op("Cast", {prod}, {AttrInt("to", static_cast<int64_t>(t))});
    }
  }
  const std::string nx = g.Op("Size", {g.I(0)});
  const std::string ny = g.Op("Size", {g.O(0)});
  return g.Op("Cast", {g.Op("Div", {nx, ny})}, {AttrInt("to", static_cast<int64_t>(t))});
}

Status ReduceSumGrad(NodeGrad& g) {
  ReduceAxes r = ReadAxes(g);
  if (r.identity) {
    g.Emit("Identity", {g.GO(0)}, {g.GI(0)});
    return Status::Ok();
  }
  MEMOPT_ASSIGN_OR_RETURN(std::string dy, Unreduce(g, r, g.GO(0), "Unsqueezed_dY"));
  g.Emit("Expand", {dy, g.ShapeOfTensor(g.I(0))}, {g.GI(0)});
  return Status::Ok();
}

Status ReduceMeanGrad(NodeGrad& g) {
  ReduceAxes r = ReadAxes(g);
  if (r.identity) {
    g.Emit("Identity", {g.GO(0)}, {g.GI(0)});
    return Status::Ok();
  }
  MEMOPT_ASSIGN_OR_RETURN(std::string dy, Unreduce(g, r, g.GO(0), "Unsqueezed_dY"));
  const std::string scaled = g.Op("Div", {dy, ReducedCount(g, r)});
  g.Emit("Expand", {scaled, g.ShapeOfTensor(g.I(0))}, {g.GI(0)});
  return Status::Ok();
}

/// ReduceMax / ReduceMin: the gradient goes to the elements equal to the result, split evenly.
Status ReduceMaxGrad(NodeGrad& g) {
  ReduceAxes r = ReadAxes(g);
  if (r.identity) {
    g.Emit("Identity", {g.GO(0)}, {g.GI(0)});
    return Status::Ok();
  }
  const DataType t = g.Dtype(g.I(0));
  MEMOPT_ASSIGN_OR_RETURN(std::string dy, Unreduce(g, r, g.GO(0), "Unsqueezed_dY"));
  MEMOPT_ASSIGN_OR_RETURN(std::string y, Unreduce(g, r, g.O(0), "Unsqueezed_Y"));
  const std::string mask = g.Op("Cast", {g.Op("Equal", {g.I(0), y})}, {AttrInt("to", static_cast<int64_t>(t))});
  std::string count;
  if (r.all) {
    count = g.Op("ReduceSum", {mask}, {AttrInt("keepdims", 0)});
  } else if (r.axes) {
    count = g.Tmp("TieCount");
    g.ReduceSum(mask, *r.axes, true, count);
  } else {
    count = g.Op("ReduceSum", {mask, r.axes_input}, {AttrInt("keepdims", 1)});
  }
  g.Emit("Mul", {g.Op("Div", {dy, count}), mask}, {g.GI(0)});
  return Status::Ok();
}

Status ReduceSumSquareGrad(NodeGrad& g) {
  ReduceAxes r = ReadAxes(g);
  const DataType t = g.Dtype(g.I(0));
  std::string dy = g.GO(0);
  if (!r.identity) {
    MEMOPT_ASSIGN_OR_RETURN(dy, Unreduce(g, r, g.GO(0), "Unsqueezed_dY"));
  }
  const std::string two_x = g.Op("Mul", {g.I(0), g.ScalarConst("Two", t, 2.0)});
  g.Emit("Mul", {dy, two_x}, {g.GI(0)});
  return Status::Ok();
}

Status ReduceL2Grad(NodeGrad& g) {  // dX = dY * X / Y (0 where Y == 0)
  ReduceAxes r = ReadAxes(g);
  const DataType t = g.Dtype(g.I(0));
  std::string dy = g.GO(0), y = g.O(0);
  if (!r.identity) {
    MEMOPT_ASSIGN_OR_RETURN(dy, Unreduce(g, r, g.GO(0), "Unsqueezed_dY"));
    MEMOPT_ASSIGN_OR_RETURN(y, Unreduce(g, r, g.O(0), "Unsqueezed_Y"));
  }
  const std::string zero = g.SharedConst("Zero", t, 0.0);
  const std::string ratio = g.Op("Div", {dy, y});
  const std::string safe = g.Op("Where", {g.Op("Equal", {y, zero}), zero, ratio});
  g.Emit("Mul", {safe, g.I(0)}, {g.GI(0)});
  return Status::Ok();
}

Status ReduceLogSumExpGrad(NodeGrad& g) {  // dX = dY * exp(X - Y)
  ReduceAxes r = ReadAxes(g);
  std::string dy = g.GO(0), y = g.O(0);
  if (!r.identity) {
    MEMOPT_ASSIGN_OR_RETURN(dy, Unreduce(g, r, g.GO(0), "Unsqueezed_dY"));
    MEMOPT_ASSIGN_OR_RETURN(y, Unreduce(g, r, g.O(0), "Unsqueezed_Y"));
  }
  const std::string e = g.Op("Exp", {g.Op("Sub", {g.I(0), y})});
  g.Emit("Mul", {dy, e}, {g.GI(0)});
  return Status::Ok();
}

/// GlobalAveragePool: dX = broadcast(dY / prod(spatial dims)).
Status GlobalAveragePoolGrad(NodeGrad& g) {
  const DataType t = g.Dtype(g.I(0));
  auto sx = g.ShapeOf(g.I(0));
  std::string count;
  if (sx && sx->size() >= 2) {
    SymExpr n(1);
    for (size_t i = 2; i < sx->size(); ++i) n *= (*sx)[i];
    if (auto c = n.AsInt()) count = g.ScalarConst("Scale", t, static_cast<double>(*c));
  }
  if (count.empty()) {
    const std::string spatial =
        g.Op("Slice", {g.ShapeOfTensor(g.I(0)), g.Int64Const("two", {2}), g.Int64Const("int64_max", {INT64_MAX})});
    count = g.Op("Cast", {g.Op("ReduceProd", {spatial}, {AttrInt("keepdims", 0)})},
                 {AttrInt("to", static_cast<int64_t>(t))});
  }
  const std::string scaled = g.Op("Div", {g.GO(0), count});
  g.Emit("Expand", {scaled, g.ShapeOfTensor(g.I(0))}, {g.GI(0)});
  return Status::Ok();
}

}  // namespace

static void RegisterReduceGradRules(OpRegistry& r) {
  r.SetGrad("", "ReduceSum", {ReduceSumGrad, {1}});
  r.SetGrad("", "ReduceMean", {ReduceMeanGrad, {1}});
  r.SetGrad("", "ReduceMax", {ReduceMaxGrad, {1}});
  r.SetGrad("", "ReduceMin", {ReduceMaxGrad, {1}});
  r.SetGrad("", "ReduceSumSquare", {ReduceSumSquareGrad, {1}});
  r.SetGrad("", "ReduceL2", {ReduceL2Grad, {1}});
  r.SetGrad("", "ReduceLogSumExp", {ReduceLogSumExpGrad, {1}});
  r.SetGrad("", "GlobalAveragePool", {GlobalAveragePoolGrad, {}});
}

}  // namespace memopt::grad

MEMOPT_OPS(reduce, reduce_gradients) {
  memopt::grad::RegisterReduceGradRules(ops);
}
