// Matrix products: MatMul, MatMulInteger, Gemm, and ms FusedMatMul / TransposeMatMul (transA,
// transB, transBatchA, transBatchB, numpy batch broadcasting). Constant inner dims that differ
// are an error naming the node; symbolic ones are assumed equal.
#include "ir/op_registry.h"
#include "shape/broadcast.h"
#include "shape/rule_registry.h"

namespace memopt::shape {

namespace {

/// numpy matmul of logical shapes a [.., M, K] and b [.., K, N] (rank-1 operands promoted).
/// Leaves *out empty (with a diagnostic) when no shape can be formed; fails only on constant
/// inner dims that differ.
Status MatMulShape(InferContext& ctx, Shape a, Shape b, std::optional<Shape>* out) {
  out->reset();
  if (a.empty() || b.empty()) {
    ctx.Diagnose(ctx.OutputName(0), "matmul operand is a scalar");
    return Status::Ok();
  }
  const bool a_vec = a.size() == 1;
  const bool b_vec = b.size() == 1;
  if (a_vec) a.insert(a.begin(), SymExpr(1));
  if (b_vec) b.push_back(SymExpr(1));
  const SymExpr& ka = a[a.size() - 1];
  const SymExpr& kb = b[b.size() - 2];
  if (ka.IsConstant() && kb.IsConstant() && !(ka == kb)) {
    return ctx.Error("inner dims differ: A " + ShapeToString(a) + " has K=" + ka.ToString() + ", B " +
                     ShapeToString(b) + " has K=" + kb.ToString());
  }
  ctx.RequireEqualDims(ka, kb);
  Shape batch_a(a.begin(), a.end() - 2);
  Shape batch_b(b.begin(), b.end() - 2);
  BroadcastResult batch = BroadcastShapes({&batch_a, &batch_b}, &ctx.broadcast_notes());
  for (const auto& c : batch.conflicts) ctx.Diagnose(ctx.OutputName(0), "batch dims do not broadcast (" + c + ")");
  Shape result = std::move(batch.shape);
  if (!a_vec) result.push_back(a[a.size() - 2]);
  if (!b_vec) result.push_back(b[b.size() - 1]);
  *out = std::move(result);
  return Status::Ok();
}

Status MatMulRule(InferContext& ctx) {
  const Shape* a = ctx.InputShape(0);
  const Shape* b = ctx.InputShape(1);
  DataType dtype = ctx.node().op_type == "MatMulInteger" ? DataType::kInt32 : ctx.InputType(0);
  std::optional<Shape> out;
  if (a != nullptr && b != nullptr) MEMOPT_RETURN_IF_ERROR(MatMulShape(ctx, *a, *b, &out));
  ctx.SetOutput(0, dtype, std::move(out));
  return Status::Ok();
}

/// QLinearMatMul(a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp): dtype of y_zero_point.
Status QLinearMatMulRule(InferContext& ctx) {
  const Shape* a = ctx.InputShape(0);
  const Shape* b = ctx.InputShape(3);
  const DataType dtype = ctx.InputType(7) != DataType::kUndefined ? ctx.InputType(7) : ctx.InputType(0);
  std::optional<Shape> out;
  if (a != nullptr && b != nullptr) MEMOPT_RETURN_IF_ERROR(MatMulShape(ctx, *a, *b, &out));
  ctx.SetOutput(0, dtype, std::move(out));
  return Status::Ok();
}

Status GemmRule(InferContext& ctx) {
  const Shape* a = ctx.InputShape(0);
  const Shape* b = ctx.InputShape(1);
  const DataType dtype = ctx.InputType(0);
  if (a == nullptr || b == nullptr) {
    ctx.SetOutput(0, dtype, std::nullopt);
    return Status::Ok();
  }
  if (a->size() != 2 || b->size() != 2) {
    ctx.Diagnose(ctx.OutputName(0), "Gemm operands must be 2-D, got " + ShapeToString(*a) + " and " + ShapeToString(*b));
    ctx.SetOutput(0, dtype, std::nullopt);
    return Status::Ok();
  }
  const bool ta = ctx.node().GetInt("transA", 0) != 0;
  const bool tb = ctx.node().GetInt("transB", 0) != 0;
  const SymExpr& m = (*a)[ta ? 1 : 0];
  const SymExpr& ka = (*a)[ta ? 0 : 1];
  const SymExpr& kb = (*b)[tb ? 1 : 0];
  const SymExpr& n = (*b)[tb ? 0 : 1];
  if (ka.IsConstant() && kb.IsConstant() && !(ka == kb)) {
    return ctx.Error("inner dims differ: A " + ShapeToString(*a) + (ta ? " (transposed)" : "") + " has K=" +
                     ka.ToString() + ", B " + ShapeToString(*b) + (tb ? " (transposed)" : "") + " has K=" + kb.ToString());
  }
  ctx.RequireEqualDims(ka, kb);
  ctx.SetOutput(0, dtype, Shape{m, n});
  return Status::Ok();
}

/// The logical [batch.., rows, cols] view of a FusedMatMul operand (see ort_training_ops.md 2.10).
Shape LogicalOperand(const Shape& physical, bool trans, bool trans_batch) {
  const size_t r = physical.size();
  if (r < 2 || (!trans && !trans_batch)) return physical;
  std::vector<size_t> perm;
  if (!trans_batch) {
    for (size_t i = 0; i + 2 < r; ++i) perm.push_back(i);
    perm.push_back(r - 1);
    perm.push_back(r - 2);
  } else {
    for (size_t i = 1; i + 1 < r; ++i) perm.push_back(i);
    if (trans) {
      perm.push_back(r - 1);
      perm.push_back(0);
    } else {
      perm.push_back(0);
      perm.push_back(r - 1);
    }
  }
  Shape logical;
  logical.reserve(r);
  for (size_t p : perm) logical.push_back(physical[p]);
  return logical;
}

Status FusedMatMulRule(InferContext& ctx) {
  const Shape* a = ctx.InputShape(0);
  const Shape* b = ctx.InputShape(1);
  const DataType dtype = ctx.InputType(0);
  std::optional<Shape> out;
  if (a != nullptr && b != nullptr) {
    const Node& node = ctx.node();
    Shape la = LogicalOperand(*a, node.GetInt("transA", 0) != 0, node.GetInt("transBatchA", 0) != 0);
    Shape lb = LogicalOperand(*b, node.GetInt("transB", 0) != 0, node.GetInt("transBatchB", 0) != 0);
    MEMOPT_RETURN_IF_ERROR(MatMulShape(ctx, std::move(la), std::move(lb), &out));
  }
  ctx.SetOutput(0, dtype, std::move(out));
  return Status::Ok();
}

}  // namespace

static void RegisterMatMulRules(RuleRegistry& r) {
  r.Add("", "MatMul", MatMulRule);
  r.Add("", "MatMulInteger", MatMulRule);
  r.Add("", "QLinearMatMul", QLinearMatMulRule);
  r.Add("", "Gemm", GemmRule);
  r.Add(kMsDomain, "FusedMatMul", FusedMatMulRule);
  r.Add(kMsDomain, "TransposeMatMul", FusedMatMulRule);
}

}  // namespace memopt::shape

MEMOPT_OPS(matmul, matmul_shape) {
  memopt::shape::RuleRegistry r(ops);
  memopt::shape::RegisterMatMulRules(r);
}
