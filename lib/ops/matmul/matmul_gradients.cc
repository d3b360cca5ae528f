// Gradient rules of MatMul, Gemm and Einsum (ort_training_ops.md §6.1, §6.2).
//
// MatMul follows ORT: Gemm when both operands are 2-D; FusedMatMul(dY, B, transB=1) for dA and
// FusedMatMul(A, dY, transA=1) for dB, summed over broadcast batch dims; a 2-D B under a batched A
// gets Gemm over the flattened rows. Unlike ORT, rank-1 operands work: A[K] is treated as [1,K]
// and B[K] as [K,1] (numpy promotion), and the extra axis is squeezed off the gradient.
#include <algorithm>

#include "grad/grad_context.h"
#include "ir/op_registry.h"

namespace memopt::grad {
namespace {

std::optional<Shape> BatchPlus(const std::optional<Shape>& y, const SymExpr& r, const SymExpr& c) {
  if (!y || y->size() < 2) return std::nullopt;
  Shape s(y->begin(), y->end() - 2);
  s.push_back(r);
  s.push_back(c);
  return s;
}

/// A 1-element int64 tensor holding dim `axis` of `tensor` (a constant when literal).
std::string DimValue(NodeGrad& g, const std::string& tensor, int64_t axis) {
  auto shape = g.ShapeOf(tensor);
  if (shape && axis >= 0 && axis < static_cast<int64_t>(shape->size())) {
    if (auto d = (*shape)[axis].AsInt()) return g.Int64Const(tensor + "_dim" + std::to_string(axis), {*d});
  }
  const std::string index = g.Int64Const("dim_index_" + std::to_string(axis), {axis});
  return g.Op("Gather", {g.ShapeOfTensor(tensor), index}, {AttrInt("axis", 0)});
}

/// [-1, dim] as an int64 shape, for flattening to rows.
std::string RowsShape(NodeGrad& g, const std::string& tensor, int64_t axis) {
  auto shape = g.ShapeOf(tensor);
  if (shape && axis >= 0 && axis < static_cast<int64_t>(shape->size())) {
    if (auto d = (*shape)[axis].AsInt()) return g.Int64Const(tensor + "_rows_shape", {-1, *d});
  }
  return g.Op("Concat", {g.Int64Const("minus_one", {-1}), DimValue(g, tensor, axis)}, {AttrInt("axis", 0)});
}

Status MatMulGrad(NodeGrad& g) {
  std::string a = g.I(0), b = g.I(1), dy = g.GO(0);
  std::optional<Shape> sa = g.ShapeOf(a), sb = g.ShapeOf(b), sy = g.ShapeOf(g.O(0));
  const bool a1 = sa && sa->size() == 1, b1 = sb && sb->size() == 1;
  // numpy promotion of rank-1 operands
  if (a1 || b1) {
    std::vector<int64_t> axes;
    if (sy) {
      const auto ry = static_cast<int64_t>(sy->size());
      if (a1 && b1) {
        axes = {0, 1};
      } else if (a1) {
        axes = {ry - 1};
      } else {
        axes = {ry};
      }
      Shape full = *sy;
      if (b1) full.push_back(SymExpr(1));
      if (a1) full.insert(full.end() - 1, SymExpr(1));
      sy = full;
    } else {
      return Unsupported("MatMul " + g.node().Describe() + ": rank-1 operand with an output of unknown rank");
    }
    const std::string dy_full = g.Tmp("dY_promoted");
    g.Unsqueeze(dy, axes, dy_full);
    dy = dy_full;
    if (a1) {
      const std::string a2 = g.Tmp("A_promoted");
      g.Unsqueeze(a, {0}, a2);
      a = a2;
      sa = Shape{SymExpr(1), (*sa)[0]};
    }
    if (b1) {
      const std::string b2 = g.Tmp("B_promoted");
      g.Unsqueeze(b, {1}, b2);
      b = b2;
      sb = Shape{(*sb)[0], SymExpr(1)};
    }
  }
  const bool a2d = sa && sa->size() == 2, b2d = sb && sb->size() == 2;

  if (g.NeedGI(0)) {
    const std::string out = a1 ? g.Tmp("dA_promoted") : g.GI(0);
    if (a2d && b2d) {
      g.Emit("Gemm", {dy, b}, {out}, {AttrInt("transB", 1)});
    } else {
      std::optional<Shape> pre_shape;
      if (sy && sb && sb->size() >= 2) pre_shape = BatchPlus(sy, (*sy)[sy->size() - 2], (*sb)[sb->size() - 2]);
      const bool reduce = NodeGrad::MayNeedReduce(pre_shape, sa);
      const std::string pre = reduce ? g.Tmp("PreReduceGrad0") : out;
      g.Emit("FusedMatMul", {dy, b}, {pre}, {AttrInt("transB", 1)}, kMsDomain);
      if (reduce) g.ReduceTo(pre, pre_shape, a, sa, out);
    }
    if (a1) g.Squeeze(out, {0}, g.GI(0));
  }
  if (g.NeedGI(1)) {
    const std::string out = b1 ? g.Tmp("dB_promoted") : g.GI(1);
    if (a2d && b2d) {
      g.Emit("Gemm", {a, dy}, {out}, {AttrInt("transA", 1)});
    } else if (b2d && sa && sa->size() > 2) {
      const std::string a_rows = g.Op("Reshape", {a, RowsShape(g, a, static_cast<int64_t>(sa->size()) - 1)});
      const std::string dy_rows =
          g.Op("Reshape", {dy, RowsShape(g, b, 1)});  // N = last dim of B
      g.Emit("Gemm", {a_rows, dy_rows}, {out}, {AttrInt("transA", 1)});
    } else {
      std::optional<Shape> pre_shape;
      if (sy && sa && sa->size() >= 2) pre_shape = BatchPlus(sy, (*sa)[sa->size() - 1], (*sy)[sy->size() - 1]);
      const bool reduce = NodeGrad::MayNeedReduce(pre_shape, sb);
      const std::string pre = reduce ? g.Tmp("PreReduceGrad1") : out;
      g.Emit("FusedMatMul", {a, dy}, {pre}, {AttrInt("transA", 1)}, kMsDomain);
      if (reduce) g.ReduceTo(pre, pre_shape, b, sb, out);
    }
    if (b1) g.Squeeze(out, {1}, g.GI(1));
  }
  return Status::Ok();
}

/// Y = alpha * op(A) @ op(B) + beta * C.
Status GemmGrad(NodeGrad& g) {
  const bool ta = g.node().GetInt("transA", 0) != 0, tb = g.node().GetInt("transB", 0) != 0;
  const float alpha = g.node().GetFloat("alpha", 1.0f), beta = g.node().GetFloat("beta", 1.0f);
  auto attrs = [&](bool t_a, bool t_b) {
    std::vector<onnx::AttributeProto> v;
    if (t_a) v.push_back(AttrInt("transA", 1));
    if (t_b) v.push_back(AttrInt("transB", 1));
    if (alpha != 1.0f) v.push_back(AttrFloat("alpha", alpha));
    return v;
  };
  const std::string a = g.I(0), b = g.I(1), dy = g.GO(0);
  if (g.NeedGI(0)) {
    if (!ta) {
      g.Emit("Gemm", {dy, b}, {g.GI(0)}, attrs(false, !tb));
    } else {
      g.Emit("Gemm", {b, dy}, {g.GI(0)}, attrs(tb, true));
    }
  }
  if (g.NeedGI(1)) {
    if (!tb) {
      g.Emit("Gemm", {a, dy}, {g.GI(1)}, attrs(!ta, false));
    } else {
      g.Emit("Gemm", {dy, a}, {g.GI(1)}, attrs(true, ta));
    }
  }
  if (g.NeedGI(2)) {
    if (beta == 1.0f) {
      g.ReduceTo(dy, g.ShapeOf(g.O(0)), g.I(2), g.GI(2));
    } else {
      const std::string reduced = g.Tmp("dC_reduced");
      g.ReduceTo(dy, g.ShapeOf(g.O(0)), g.I(2), reduced);
      g.Emit("Mul", {reduced, g.ScalarConst("Scale", g.Dtype(g.I(2)), beta)}, {g.GI(2)});
    }
  }
  return Status::Ok();
}

// ------------------------------------------------------------------------------------------------
// Einsum

/// One operand's subscripts: letters, with "." standing for the ellipsis.
using Term = std::string;

Status ParseEinsum(const std::string& equation, std::vector<Term>* inputs, Term* output) {
  std::string eq;
  for (char c : equation) {
    if (c != ' ') eq += c;
  }
  auto squash = [](std::string t) {  // "..." -> "."
    std::string out;
    for (size_t i = 0; i < t.size(); ++i) {
      if (t.compare(i, 3, "...") == 0) {
        out += '.';
        i += 2;
      } else {
        out += t[i];
      }
    }
    return out;
  };
  const size_t arrow = eq.find("->");
  const std::string lhs = arrow == std::string::npos ? eq : eq.substr(0, arrow);
  size_t start = 0;
  while (true) {
    const size_t comma = lhs.find(',', start);
    inputs->push_back(squash(lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start)));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (arrow != std::string::npos) {
    *output = squash(eq.substr(arrow + 2));
  } else {  // implicit: letters used once, sorted, after the ellipsis
    std::map<char, int> count;
    bool ellipsis = false;
    for (const Term& t : *inputs) {
      for (char c : t) {
        if (c == '.') {
          ellipsis = true;
        } else {
          ++count[c];
        }
      }
    }
    *output = ellipsis ? "." : "";
    for (const auto& [c, n] : count) {
      if (n == 1) *output += c;
    }
  }
  for (const Term& t : *inputs) {
    for (char c : t) {
      if (c != '.' && !std::isalpha(static_cast<unsigned char>(c))) {
        return InvalidInput("cannot parse Einsum equation '" + equation + "'");
      }
    }
  }
  return Status::Ok();
}

std::string Expand(const Term& t) {
  std::string out;
  for (char c : t) out += c == '.' ? std::string("...") : std::string(1, c);
  return out;
}

/// dOperand_i = einsum(dY, other operands) over operand i's subscripts. Subscripts that appear only
/// in operand i (summed away) are restored with Unsqueeze + Expand; broadcast ellipsis dims are
/// summed back. Repeated subscripts within one operand (diagonals) are not supported.
Status EinsumGrad(NodeGrad& g) {
  std::vector<Term> terms;
  Term out_term;
  const std::string equation = g.node().GetString("equation", "");
  MEMOPT_RETURN_IF_ERROR(ParseEinsum(equation, &terms, &out_term).WithContext("node " + g.node().Describe()));
  if (static_cast<int>(terms.size()) != g.num_inputs()) {
    return InvalidInput("node " + g.node().Describe() + ": Einsum equation '" + equation + "' has " +
                        std::to_string(terms.size()) + " operands, the node " + std::to_string(g.num_inputs()));
  }
  for (int i = 0; i < g.num_inputs(); ++i) {
    if (!g.NeedGI(i)) continue;
    const Term& ti = terms[i];
    std::set<char> seen;
    for (char c : ti) {
      if (c != '.' && !seen.insert(c).second) {
        return Unsupported("node " + g.node().Describe() + ": gradient of Einsum '" + equation +
                           "' with a repeated subscript in one operand (a diagonal) is not supported");
      }
    }
    std::set<char> available(out_term.begin(), out_term.end());
    for (int j = 0; j < g.num_inputs(); ++j) {
      if (j != i) available.insert(terms[j].begin(), terms[j].end());
    }
    Term kept;
    std::vector<int64_t> missing_positions;
    const bool has_ellipsis = ti.find('.') != std::string::npos;
    for (size_t p = 0; p < ti.size(); ++p) {
      if (available.count(ti[p])) {
        kept += ti[p];
      } else if (ti[p] == '.' || has_ellipsis) {
        return Unsupported("node " + g.node().Describe() + ": gradient of Einsum '" + equation +
                           "': operand " + std::to_string(i) + " has summed-away subscripts next to an ellipsis");
      } else {
        missing_positions.push_back(static_cast<int64_t>(p));
      }
    }
    std::string eq = Expand(out_term);
    std::vector<std::string> operands = {g.GO(0)};
    for (int j = 0; j < g.num_inputs(); ++j) {
      if (j == i) continue;
      eq += "," + Expand(terms[j]);
      operands.push_back(g.I(j));
    }
    eq += "->" + Expand(kept);
    const bool direct = missing_positions.empty() && !has_ellipsis;
    const std::string pre = direct ? g.GI(i) : g.Tmp("PreReduceGrad" + std::to_string(i));
    g.Emit("Einsum", operands, {pre}, {AttrString("equation", eq)});
    if (direct) continue;
    if (!missing_positions.empty()) {
      const std::string unsq = g.Tmp("Unsqueezed" + std::to_string(i));
      g.Unsqueeze(pre, missing_positions, unsq);
      g.Emit("Expand", {unsq, g.ShapeOfTensor(g.I(i))}, {g.GI(i)});
    } else {
      g.ReduceTo(pre, std::nullopt, g.I(i), g.GI(i));
    }
  }
  return Status::Ok();
}

}  // namespace

static void RegisterMatMulGradRules(OpRegistry& r) {
  r.SetGrad("", "MatMul", {MatMulGrad, {}});
  r.SetGrad("", "Gemm", {GemmGrad, {}});
  r.SetGrad("", "Einsum", {EinsumGrad, {}});
}

}  // namespace memopt::grad

MEMOPT_OPS(matmul, matmul_gradients) {
  memopt::grad::RegisterMatMulGradRules(ops);
}
