// Value propagation for small integer tensors (shape arithmetic; float tensors holding integral
// values, e.g. Cast(Shape(x)) -> Min -> Cast, are tracked too): Shape, Size, Constant,
// ConstantOfShape, Range, the reshaping ops that keep element order (Identity, Reshape, Squeeze,
// Unsqueeze, Flatten), Cast, and elementwise arithmetic, comparison, logic and Where.
// Layout-changing ops (Gather, Slice, Concat, Expand, Tile, Reduce*) are in layout_values.cc.
//
// Element values are SymExprs, so Shape(x) of a symbolic tensor gives symbolic values and the
// arithmetic downstream stays symbolic. Integer division (ONNX Div on ints truncates toward
// zero) is exact when both operands are constants or the quotient is an exact polynomial
// (DivExact); otherwise, with a positive constant divisor and a dividend that cannot be negative,
// truncation equals floor and the value is floor(a/b) (an opaque atom); in any other case the
// values are dropped. Mod follows the same pattern. Comparisons are decided only when certain
// (equal expressions, two constants, or a negative constant against a non-negative dim).
#include <algorithm>

#include "ir/op_registry.h"
#include "shape/infer_context.h"
#include "shape/rule_registry.h"
#include "shape/value_util.h"

namespace memopt::shape {

namespace {

using ScalarFn = std::optional<SymExpr> (*)(InferContext& ctx, const std::vector<SymExpr>& args);

/// The output's constant dims when its values can be tracked.
std::optional<std::vector<int64_t>> TrackedOutputDims(const InferContext& ctx, size_t out) {
  const TensorInfo& info = ctx.OutputInfo(out);
  if (!info.shape.has_value()) return std::nullopt;
  if (!TracksValues(info.dtype)) return std::nullopt;
  return SmallConstDims(*info.shape);
}

Status ShapeValues(InferContext& ctx) {
  const Shape* in = ctx.InputShape(0);
  if (in == nullptr) return Status::Ok();
  const auto rank = static_cast<int64_t>(in->size());
  auto clamp = [rank](int64_t v) {
    if (v < 0) v += rank;
    return std::clamp<int64_t>(v, 0, rank);
  };
  const int64_t start = clamp(ctx.node().GetInt("start", 0));
  const int64_t end = std::max(start, ctx.node().HasAttr("end") ? clamp(ctx.node().GetInt("end", rank)) : rank);
  ctx.SetOutputValues(0, std::vector<SymExpr>(in->begin() + start, in->begin() + end));
  return Status::Ok();
}

Status SizeValues(InferContext& ctx) {
  if (const Shape* in = ctx.InputShape(0)) ctx.SetOutputValues(0, {NumElements(*in)});
  return Status::Ok();
}

std::vector<SymExpr> ToExprs(const std::vector<int64_t>& ints) {
  return std::vector<SymExpr>(ints.begin(), ints.end());
}

/// The values as integers when every one is integral (floats that carry shape numbers).
std::optional<std::vector<int64_t>> IntegralFloats(const std::optional<std::vector<double>>& values) {
  if (!values.has_value()) return std::nullopt;
  std::vector<int64_t> out;
  for (double v : *values) {
    if (!(v > -9.0e15 && v < 9.0e15) || v != static_cast<double>(static_cast<int64_t>(v))) return std::nullopt;
    out.push_back(static_cast<int64_t>(v));
  }
  return out;
}

Status ConstantValues(InferContext& ctx) {
  const Node& node = ctx.node();
  if (const onnx::TensorProto* t = node.GetTensor("value")) {
    const auto dtype = static_cast<DataType>(t->data_type());
    if (IsFloatingPoint(dtype)) {
      if (auto floats = IntegralFloats(DecodeFloatTensor(*t, kMaxValueElements))) ctx.SetOutputValues(0, ToExprs(*floats));
    } else if (TracksValues(dtype)) {
      if (auto ints = DecodeIntTensor(*t, kMaxValueElements)) ctx.SetOutputValues(0, ToExprs(*ints));
    }
  } else if (node.HasAttr("value_float")) {
    if (auto f = IntegralFloats(std::vector<double>{node.GetFloat("value_float", 0.5f)})) ctx.SetOutputValues(0, ToExprs(*f));
  } else if (node.HasAttr("value_int")) {
    ctx.SetOutputValues(0, {SymExpr(node.GetInt("value_int", 0))});
  } else if (node.HasAttr("value_ints")) {
    ctx.SetOutputValues(0, ToExprs(node.GetInts("value_ints")));
  }
  return Status::Ok();
}

Status ConstantOfShapeValues(InferContext& ctx) {
  auto dims = TrackedOutputDims(ctx, 0);
  if (!dims.has_value() || !TracksValues(ctx.OutputInfo(0).dtype)) return Status::Ok();
  int64_t fill = 0;
  if (const onnx::TensorProto* t = ctx.node().GetTensor("value")) {
    auto ints = DecodeIntTensor(*t, 1);
    if (!ints.has_value() || ints->size() != 1) return Status::Ok();
    fill = (*ints)[0];
  }
  int64_t numel = 1;
  for (int64_t d : *dims) numel *= d;
  ctx.SetOutputValues(0, std::vector<SymExpr>(static_cast<size_t>(numel), SymExpr(fill)));
  return Status::Ok();
}

Status RangeValues(InferContext& ctx) {
  auto dims = TrackedOutputDims(ctx, 0);
  const auto* start = ctx.InputValues(0);
  const auto* delta = ctx.InputValues(2);
  if (!dims.has_value() || dims->size() != 1 || start == nullptr || delta == nullptr || start->size() != 1 ||
      delta->size() != 1) {
    return Status::Ok();
  }
  std::vector<SymExpr> values;
  for (int64_t i = 0; i < (*dims)[0]; ++i) values.push_back((*start)[0] + SymExpr(i) * (*delta)[0]);
  ctx.SetOutputValues(0, std::move(values));
  return Status::Ok();
}

/// Identity, Reshape, Squeeze, Unsqueeze, Flatten: same elements in the same order.
Status CopyValues(InferContext& ctx) {
  if (const auto* v = ctx.InputValues(0)) ctx.SetOutputValues(0, *v);
  return Status::Ok();
}

Status CastValues(InferContext& ctx) {
  const auto* v = ctx.InputValues(0);
  if (v == nullptr) return Status::Ok();
  const DataType to = ctx.OutputInfo(0).dtype;
  if (to == DataType::kBool) {
    std::vector<SymExpr> out;
    for (const SymExpr& e : *v) {
      auto r = e.AsRational();
      if (!r.has_value()) return Status::Ok();
      out.emplace_back(r->IsZero() ? 0 : 1);
    }
    ctx.SetOutputValues(0, std::move(out));
    return Status::Ok();
  }
  if (IsInteger(to)) {
    // Truncate constant fractions toward zero; symbolic values are integral dims already.
    std::vector<SymExpr> out;
    for (const SymExpr& e : *v) {
      auto r = e.AsRational();
      out.push_back(r.has_value() && !r->IsInteger() ? SymExpr(r->num / r->den) : e);
    }
    ctx.SetOutputValues(0, std::move(out));
    return Status::Ok();
  }
  if (IsFloatingPoint(to)) ctx.SetOutputValues(0, *v);
  return Status::Ok();
}

/// Applies fn elementwise with numpy broadcasting over all present inputs. `arity` > 0: fn takes
/// exactly that many arguments, so a node with another number of inputs (or an omitted one, which
/// would shift the arguments) tracks no values; 0: variadic (Sum, Max, Min), one or more.
Status ElementwiseValues(InferContext& ctx, ScalarFn fn, size_t arity) {
  auto out_dims = TrackedOutputDims(ctx, 0);
  if (!out_dims.has_value() || !TracksValues(ctx.OutputInfo(0).dtype)) return Status::Ok();
  if (arity > 0) {
    if (ctx.NumInputs() != arity) return Status::Ok();
    for (size_t i = 0; i < arity; ++i) {
      if (!ctx.HasInput(i)) return Status::Ok();
    }
  }
  std::vector<const std::vector<SymExpr>*> values;
  std::vector<std::vector<int64_t>> maps;
  for (size_t i = 0; i < ctx.NumInputs(); ++i) {
    if (!ctx.HasInput(i)) continue;
    const auto* v = ctx.InputValues(i);
    const Shape* s = ctx.InputShape(i);
    if (v == nullptr || s == nullptr) return Status::Ok();
    auto dims = SmallConstDims(*s);
    if (!dims.has_value() || !BroadcastsTo(*dims, *out_dims)) return Status::Ok();
    values.push_back(v);
    maps.push_back(BroadcastIndexMap(*out_dims, *dims));
  }
  if (values.empty()) return Status::Ok();
  const size_t numel = maps[0].size();
  std::vector<SymExpr> out;
  out.reserve(numel);
  std::vector<SymExpr> args(values.size());
  for (size_t k = 0; k < numel; ++k) {
    for (size_t i = 0; i < values.size(); ++i) {
      const auto src = static_cast<size_t>(maps[i][k]);
      if (src >= values[i]->size()) return Status::Ok();
      args[i] = (*values[i])[src];
    }
    auto r = fn(ctx, args);
    if (!r.has_value()) return Status::Ok();
    out.push_back(std::move(*r));
  }
  ctx.SetOutputValues(0, std::move(out));
  return Status::Ok();
}

template <ScalarFn F, size_t kArity>
Status Elementwise(InferContext& ctx) {
  return ElementwiseValues(ctx, F, kArity);
}

std::optional<SymExpr> AddFn(InferContext&, const std::vector<SymExpr>& a) {
  SymExpr s(0);
  for (const SymExpr& e : a) s = s + e;
  return s;
}
std::optional<SymExpr> SubFn(InferContext&, const std::vector<SymExpr>& a) { return a[0] - a[1]; }
std::optional<SymExpr> MulFn(InferContext&, const std::vector<SymExpr>& a) { return a[0] * a[1]; }
std::optional<SymExpr> NegFn(InferContext&, const std::vector<SymExpr>& a) { return -a[0]; }

std::optional<SymExpr> AbsFn(InferContext&, const std::vector<SymExpr>& a) {
  if (auto r = a[0].AsRational(); r.has_value()) return r->num < 0 ? -a[0] : a[0];
  if (KnownNonNegative(a[0])) return a[0];
  return std::nullopt;
}

std::optional<SymExpr> DivFn(InferContext& ctx, const std::vector<SymExpr>& a) {
  if (!IsInteger(ctx.OutputInfo(0).dtype)) {
    // Float division of shape values (the dynamo exporter computes ceil(n / 32.0) * 32): exact as
    // a rational by a non-zero constant; Ceil/Floor and a Cast back make integers of it.
    auto y = a[1].AsRational();
    if (!y.has_value() || y->IsZero()) return std::nullopt;
    return a[0].Scaled(Rational(1) / *y);
  }
  auto x = a[0].AsInt();
  auto y = a[1].AsInt();
  if (y.has_value() && *y == 0) return std::nullopt;
  if (x.has_value() && y.has_value()) return SymExpr(*x / *y);  // C++ truncates like ONNX
  if (auto exact = IntegerQuotient(a[0], a[1]); exact.has_value()) return exact;
  if (y.has_value() && *y > 0 && KnownNonNegative(a[0])) return SymExpr::FloorDiv(a[0], a[1]);
  return std::nullopt;
}

/// Ceil/Floor of constants, and of integral polynomials (which they leave as they are).
template <bool kCeil>
std::optional<SymExpr> RoundFn(InferContext&, const std::vector<SymExpr>& a) {
  if (auto r = a[0].AsRational(); r.has_value()) {
    const int64_t q = r->num / r->den;  // toward zero
    const bool exact = q * r->den == r->num;
    if (exact) return SymExpr(q);
    return SymExpr(kCeil ? (r->num > 0 ? q + 1 : q) : (r->num > 0 ? q : q - 1));
  }
  if (a[0].IsPolynomial() && a[0].ToString().find('/') == std::string::npos) return a[0];
  return std::nullopt;
}

std::optional<SymExpr> ModFn(InferContext& ctx, const std::vector<SymExpr>& a) {
  if (!IsInteger(ctx.OutputInfo(0).dtype)) return std::nullopt;
  auto x = a[0].AsInt();
  auto y = a[1].AsInt();
  if (y.has_value() && *y == 0) return std::nullopt;
  if (x.has_value() && y.has_value()) {
    int64_t m = *x % *y;  // fmod=1: sign of the dividend
    if (ctx.node().GetInt("fmod", 0) == 0 && m != 0 && ((m < 0) != (*y < 0))) m += *y;
    return SymExpr(m);
  }
  if (y.has_value() && *y > 0 && KnownNonNegative(a[0])) return SymExpr::Mod(a[0], a[1]);
  return std::nullopt;
}

std::optional<SymExpr> MaxFn(InferContext&, const std::vector<SymExpr>& a) {
  SymExpr m = a[0];
  for (size_t i = 1; i < a.size(); ++i) m = SymExpr::Max(m, a[i]);
  return m;
}

std::optional<SymExpr> MinFn(InferContext& ctx, const std::vector<SymExpr>& a) {
  SymExpr m = a[0];
  for (size_t i = 1; i < a.size(); ++i) {
    SymExpr next = SymExpr::Min(m, a[i]);
    ctx.broadcast_notes().RecordMin(next, m, a[i]);
    m = next;
  }
  return m;
}

/// -1, 0 or 1 when the order of a and b is certain.
std::optional<int> Compare(const SymExpr& a, const SymExpr& b) {
  if (a == b) return 0;
  auto ra = a.AsRational();
  auto rb = b.AsRational();
  if (ra.has_value() && rb.has_value()) return *ra < *rb ? -1 : 1;
  if (ra.has_value() && ra->num < 0 && KnownNonNegative(b)) return -1;
  if (rb.has_value() && rb->num < 0 && KnownNonNegative(a)) return 1;
  return std::nullopt;
}

SymExpr Bool(bool b) { return SymExpr(b ? 1 : 0); }

std::optional<SymExpr> EqualFn(InferContext&, const std::vector<SymExpr>& a) {
  auto c = Compare(a[0], a[1]);
  if (!c.has_value()) return std::nullopt;
  return Bool(*c == 0);
}
std::optional<SymExpr> LessFn(InferContext&, const std::vector<SymExpr>& a) {
  auto c = Compare(a[0], a[1]);
  if (!c.has_value()) return std::nullopt;
  return Bool(*c < 0);
}
std::optional<SymExpr> GreaterFn(InferContext&, const std::vector<SymExpr>& a) {
  auto c = Compare(a[0], a[1]);
  if (!c.has_value()) return std::nullopt;
  return Bool(*c > 0);
}
std::optional<SymExpr> LessOrEqualFn(InferContext&, const std::vector<SymExpr>& a) {
  auto c = Compare(a[0], a[1]);
  if (!c.has_value()) return std::nullopt;
  return Bool(*c <= 0);
}
std::optional<SymExpr> GreaterOrEqualFn(InferContext&, const std::vector<SymExpr>& a) {
  auto c = Compare(a[0], a[1]);
  if (!c.has_value()) return std::nullopt;
  return Bool(*c >= 0);
}

std::optional<bool> AsBool(const SymExpr& e) {
  auto r = e.AsRational();
  if (!r.has_value()) return std::nullopt;
  return !r->IsZero();
}

std::optional<SymExpr> NotFn(InferContext&, const std::vector<SymExpr>& a) {
  auto b = AsBool(a[0]);
  if (!b.has_value()) return std::nullopt;
  return Bool(!*b);
}
std::optional<SymExpr> AndFn(InferContext&, const std::vector<SymExpr>& a) {
  auto x = AsBool(a[0]);
  auto y = AsBool(a[1]);
  if (x == std::optional<bool>(false) || y == std::optional<bool>(false)) return Bool(false);
  if (!x.has_value() || !y.has_value()) return std::nullopt;
  return Bool(true);
}
std::optional<SymExpr> OrFn(InferContext&, const std::vector<SymExpr>& a) {
  auto x = AsBool(a[0]);
  auto y = AsBool(a[1]);
  if (x == std::optional<bool>(true) || y == std::optional<bool>(true)) return Bool(true);
  if (!x.has_value() || !y.has_value()) return std::nullopt;
  return Bool(false);
}
std::optional<SymExpr> XorFn(InferContext&, const std::vector<SymExpr>& a) {
  auto x = AsBool(a[0]);
  auto y = AsBool(a[1]);
  if (!x.has_value() || !y.has_value()) return std::nullopt;
  return Bool(*x != *y);
}
std::optional<SymExpr> WhereFn(InferContext&, const std::vector<SymExpr>& a) {
  auto c = AsBool(a[0]);
  if (!c.has_value()) return a[1] == a[2] ? std::optional<SymExpr>(a[1]) : std::nullopt;
  return *c ? a[1] : a[2];
}

}  // namespace

static void RegisterValueRules(RuleRegistry& r) {
  r.AddValues("", "Shape", ShapeValues);
  r.AddValues("", "Size", SizeValues);
  r.AddValues("", "Constant", ConstantValues);
  r.AddValues("", "ConstantOfShape", ConstantOfShapeValues);
  r.AddValues("", "Range", RangeValues);
  for (const char* op : {"Identity", "Reshape", "Squeeze", "Unsqueeze", "Flatten"}) r.AddValues("", op, CopyValues);
  r.AddValues("", "Cast", CastValues);
  r.AddValues("", "CastLike", CastValues);  // the output type comes from the second input
  r.AddValues("", "Add", Elementwise<AddFn, 0>);
  r.AddValues("", "Sum", Elementwise<AddFn, 0>);
  r.AddValues("", "Sub", Elementwise<SubFn, 2>);
  r.AddValues("", "Mul", Elementwise<MulFn, 2>);
  r.AddValues("", "Div", Elementwise<DivFn, 2>);
  r.AddValues("", "Mod", Elementwise<ModFn, 2>);
  r.AddValues("", "Ceil", Elementwise<RoundFn<true>, 1>);
  r.AddValues("", "Floor", Elementwise<RoundFn<false>, 1>);
  r.AddValues("", "Neg", Elementwise<NegFn, 1>);
  r.AddValues("", "Abs", Elementwise<AbsFn, 1>);
  r.AddValues("", "Max", Elementwise<MaxFn, 0>);
  r.AddValues("", "Min", Elementwise<MinFn, 0>);
  r.AddValues("", "Equal", Elementwise<EqualFn, 2>);
  r.AddValues("", "Less", Elementwise<LessFn, 2>);
  r.AddValues("", "Greater", Elementwise<GreaterFn, 2>);
  r.AddValues("", "LessOrEqual", Elementwise<LessOrEqualFn, 2>);
  r.AddValues("", "GreaterOrEqual", Elementwise<GreaterOrEqualFn, 2>);
  r.AddValues("", "Not", Elementwise<NotFn, 1>);
  r.AddValues("", "And", Elementwise<AndFn, 2>);
  r.AddValues("", "Or", Elementwise<OrFn, 2>);
  r.AddValues("", "Xor", Elementwise<XorFn, 2>);
  r.AddValues("", "Where", Elementwise<WhereFn, 3>);
}

}  // namespace memopt::shape

MEMOPT_OPS(layout, shape_values) {
  memopt::shape::RuleRegistry r(ops);
  memopt::shape::RegisterValueRules(r);
}
