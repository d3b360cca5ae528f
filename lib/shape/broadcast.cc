#include "shape/broadcast.h"

#include <algorithm>

namespace memopt::shape {

namespace {

bool IsOne(const SymExpr& e) {
  auto v = e.AsInt();
  return v.has_value() && *v == 1;
}

}  // namespace

SymExpr BroadcastDim(const SymExpr& a, const SymExpr& b, BroadcastNotes* notes, bool* conflict) {
  if (a == b) return a;
  if (IsOne(a)) return b;
  if (IsOne(b)) return a;
  const bool ca = a.IsConstant();
  const bool cb = b.IsConstant();
  if (ca && cb) {
    if (conflict != nullptr) *conflict = true;
    // A constant whose arithmetic overflowed has no value: keep it, so that sizes computed from
    // it stay unsized (found by fuzz_model_loader: value() threw bad_optional_access).
    const auto ra = a.AsRational();
    const auto rb = b.AsRational();
    if (!ra.has_value()) return a;
    if (!rb.has_value()) return b;
    return *ra < *rb ? b : a;
  }
  if (ca) return a;
  if (cb) return b;
  // Max(Max(x, y), y) is Max(x, y): keep ambiguous broadcasts flat.
  if (notes != nullptr && notes->Admits(a, b)) return a;
  if (notes != nullptr && notes->Admits(b, a)) return b;
  // Max(x, Min(x, y)) is x.
  if (notes != nullptr && notes->IsMinOf(b, a)) return a;
  if (notes != nullptr && notes->IsMinOf(a, b)) return b;
  SymExpr result = SymExpr::Max(a, b);
  if (notes != nullptr && !(result == a) && !(result == b)) notes->Record(result, a, b);
  return result;
}

BroadcastResult BroadcastShapes(const std::vector<const Shape*>& shapes, BroadcastNotes* notes) {
  BroadcastResult out;
  size_t rank = 0;
  for (const Shape* s : shapes) rank = std::max(rank, s->size());
  out.shape.assign(rank, SymExpr(1));
  for (size_t k = 0; k < rank; ++k) {
    // k counts from the right.
    std::optional<SymExpr> acc;
    for (const Shape* s : shapes) {
      if (k >= s->size()) continue;
      const SymExpr& d = (*s)[s->size() - 1 - k];
      if (!acc.has_value()) {
        acc = d;
        continue;
      }
      bool conflict = false;
      SymExpr before = *acc;
      acc = BroadcastDim(*acc, d, notes, &conflict);
      if (conflict) {
        out.conflicts.push_back("dim " + std::to_string(rank - 1 - k) + ": " + before.ToString() +
                                " vs " + d.ToString());
      }
    }
    if (acc.has_value()) out.shape[rank - 1 - k] = *acc;
  }
  return out;
}

std::optional<Shape> BroadcastInputs(InferContext& ctx, const std::vector<size_t>& inputs) {
  std::vector<const Shape*> shapes;
  for (size_t i : inputs) {
    const Shape* s = ctx.InputShape(i);
    if (s == nullptr) return std::nullopt;
    shapes.push_back(s);
  }
  if (shapes.empty()) return std::nullopt;
  BroadcastResult r = BroadcastShapes(shapes, &ctx.broadcast_notes());
  for (const auto& c : r.conflicts) {
    ctx.Diagnose(ctx.HasOutput(0) ? ctx.OutputName(0) : std::string(),
                 "inputs do not broadcast (" + c + ")");
  }
  return r.shape;
}

}  // namespace memopt::shape
