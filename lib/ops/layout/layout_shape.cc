// Layout ops: Reshape, Flatten, Transpose, Squeeze, Unsqueeze, Concat (+ ms ConcatTraining),
// Split (+ ms SplitTraining), Expand, Tile, DepthToSpace, SpaceToDepth.
//
// Reshape semantics with symbolic values: 0 copies the input dim (unless allowzero=1), -1 is
// numel(input) / prod(other dims) when that division is exact as a polynomial (DivExact), else a
// floor(a/b) atom; any other entry (constant or symbolic, e.g. from Shape -> Gather -> Concat) is
// the dim itself.
#include <algorithm>

#include "ir/op_registry.h"
#include "shape/broadcast.h"
#include "shape/rule_registry.h"

namespace memopt::shape {

namespace {

Status ReshapeRule(InferContext& ctx) {
  const DataType dtype = ctx.InputType(0);
  const Shape* in = ctx.InputShape(0);
  std::vector<SymExpr> target;
  if (ctx.node().HasAttr("shape")) {  // Reshape-1
    for (int64_t v : ctx.node().GetInts("shape")) target.emplace_back(v);
  } else if (const auto* vals = ctx.InputValues(1); vals != nullptr) {
    target = *vals;
  } else {
    IntListArg arg = ReadIntList(ctx, "shape", 1);
    if (arg.length.has_value() && *arg.length >= 0) {
      ctx.SetOutput(0, dtype, ctx.FreshShape(0, static_cast<size_t>(*arg.length), "Reshape shape input not constant"));
    } else {
      ctx.SetOutput(0, dtype, std::nullopt);
      ctx.Diagnose(ctx.OutputName(0), "rank unresolved: Reshape shape input not constant and of unknown length");
    }
    return Status::Ok();
  }
  const bool allowzero = ctx.node().GetInt("allowzero", 0) != 0;
  Shape out;
  out.reserve(target.size());
  std::optional<size_t> infer_index;
  for (size_t i = 0; i < target.size(); ++i) {
    const auto v = target[i].AsInt();
    if (!v.has_value()) {
      out.push_back(target[i]);
      continue;
    }
    if (*v == -1) {
      if (infer_index.has_value()) {
        return ctx.Error("shape " + ShapeToString(target) + " has more than one -1 entry");
      }
      infer_index = i;
      out.emplace_back(0);  // placeholder
    } else if (*v == 0 && !allowzero) {
      if (in != nullptr && i < in->size()) {
        out.push_back((*in)[i]);
      } else if (in != nullptr) {
        ctx.Diagnose(ctx.OutputName(0), "Reshape entry " + std::to_string(i) + " is 0 (copy) but the input has rank " +
                                            std::to_string(in->size()));
        out.push_back(ctx.FreshDim(0, i, "Reshape copies a dim the input does not have"));
      } else {
        out.push_back(ctx.FreshDim(0, i, "Reshape copies a dim of an input of unknown shape"));
      }
    } else if (*v < 0) {
      ctx.Diagnose(ctx.OutputName(0), "Reshape entry " + std::to_string(i) + " is " + std::to_string(*v));
      out.push_back(ctx.FreshDim(0, i, "invalid Reshape entry"));
    } else {
      out.emplace_back(*v);
    }
  }
  if (infer_index.has_value()) {
    const size_t k = *infer_index;
    if (in == nullptr) {
      out[k] = ctx.FreshDim(0, k, "Reshape -1 with an input of unknown shape");
    } else {
      SymExpr others(1);
      for (size_t i = 0; i < out.size(); ++i) {
        if (i != k) others = others * out[i];
      }
      const SymExpr numel = NumElements(*in);
      if (others.IsZero()) {
        out[k] = ctx.FreshDim(0, k, "Reshape -1 next to a zero dim");
      } else {
        out[k] = DivideDims(numel, others);
      }
    }
  }
  ctx.SetOutput(0, dtype, std::move(out));
  return Status::Ok();
}

Status FlattenRule(InferContext& ctx) {
  const Shape* in = ctx.InputShape(0);
  if (in == nullptr) {
    ctx.SetOutput(0, ctx.InputType(0), ctx.FreshShape(0, 2, "Flatten of an input of unknown shape"));
    return Status::Ok();
  }
  const auto rank = static_cast<int64_t>(in->size());
  int64_t axis = ctx.node().GetInt("axis", 1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis > rank) {
    return ctx.Error("Flatten axis " + std::to_string(ctx.node().GetInt("axis", 1)) +
                                        " out of range for rank " + std::to_string(rank));
  }
  ctx.SetOutput(0, ctx.InputType(0),
                Shape{ProductOfDims(*in, 0, static_cast<size_t>(axis)), ProductOfDims(*in, static_cast<size_t>(axis), in->size())});
  return Status::Ok();
}

Status TransposeRule(InferContext& ctx) {
  const Shape* in = ctx.InputShape(0);
  if (in == nullptr) {
    ctx.SetOutput(0, ctx.InputType(0), std::nullopt);
    return Status::Ok();
  }
  std::vector<int64_t> perm = ctx.node().GetInts("perm");
  const auto rank = static_cast<int64_t>(in->size());
  if (perm.empty()) {
    for (int64_t i = rank - 1; i >= 0; --i) perm.push_back(i);
  }
  Shape out;
  std::vector<bool> used(in->size(), false);
  bool valid = static_cast<int64_t>(perm.size()) == rank;
  for (int64_t p : perm) {
    auto axis = NormalizeAxis(p, rank);
    if (!valid || !axis.has_value() || used[*axis]) {
      valid = false;
      break;
    }
    used[*axis] = true;
    out.push_back((*in)[*axis]);
  }
  if (!valid) {
    return ctx.Error("Transpose perm " + IntsToString(perm) + " does not fit rank " + std::to_string(rank));
  }
  ctx.SetOutput(0, ctx.InputType(0), std::move(out));
  return Status::Ok();
}

Status SqueezeRule(InferContext& ctx) {
  const Shape* in = ctx.InputShape(0);
  const DataType dtype = ctx.InputType(0);
  IntListArg axes = ReadIntList(ctx, "axes", 1);
  if (in == nullptr) {
    ctx.SetOutput(0, dtype, std::nullopt);
    return Status::Ok();
  }
  const auto rank = static_cast<int64_t>(in->size());
  if (axes.present && !axes.values.has_value()) {
    if (axes.length.has_value() && *axes.length <= rank) {
      ctx.SetOutput(0, dtype, ctx.FreshShape(0, static_cast<size_t>(rank - *axes.length), "Squeeze axes not constant"));
    } else {
      ctx.SetOutput(0, dtype, std::nullopt);
    }
    return Status::Ok();
  }
  std::vector<bool> drop(in->size(), false);
  if (!axes.present || axes.values->empty()) {
    // No axes: drop every dim that is 1. Symbolic dims are assumed not to be 1.
    for (size_t i = 0; i < in->size(); ++i) {
      auto v = (*in)[i].AsInt();
      drop[i] = v.has_value() && *v == 1;
    }
  } else {
    for (int64_t a : *axes.values) {
      auto axis = NormalizeAxis(a, rank);
      if (!axis.has_value()) {
        return ctx.Error("Squeeze axis " + std::to_string(a) + " out of range for rank " + std::to_string(rank));
      }
      drop[*axis] = true;
    }
  }
  Shape out;
  for (size_t i = 0; i < in->size(); ++i) {
    if (!drop[i]) out.push_back((*in)[i]);
  }
  ctx.SetOutput(0, dtype, std::move(out));
  return Status::Ok();
}

Status UnsqueezeRule(InferContext& ctx) {
  const Shape* in = ctx.InputShape(0);
  const DataType dtype = ctx.InputType(0);
  IntListArg axes = ReadIntList(ctx, "axes", 1);
  if (in == nullptr || !axes.present) {
    ctx.SetOutput(0, dtype, std::nullopt);
    return Status::Ok();
  }
  const auto out_rank = static_cast<int64_t>(in->size()) + axes.length.value_or(0);
  if (!axes.values.has_value()) {
    if (axes.length.has_value()) {
      ctx.SetOutput(0, dtype, ctx.FreshShape(0, static_cast<size_t>(out_rank), "Unsqueeze axes not constant"));
    } else {
      ctx.SetOutput(0, dtype, std::nullopt);
    }
    return Status::Ok();
  }
  std::vector<bool> is_new(static_cast<size_t>(out_rank), false);
  for (int64_t a : *axes.values) {
    auto axis = NormalizeAxis(a, out_rank);
    if (!axis.has_value() || is_new[*axis]) {
      ctx.Diagnose(ctx.OutputName(0), "Unsqueeze axes " + IntsToString(*axes.values) + " invalid for output rank " +
                                          std::to_string(out_rank));
      ctx.SetOutput(0, dtype, std::nullopt);
      return Status::Ok();
    }
    is_new[*axis] = true;
  }
  Shape out;
  size_t next = 0;
  for (int64_t i = 0; i < out_rank; ++i) {
    if (is_new[i]) {
      out.emplace_back(1);
    } else {
      out.push_back((*in)[next++]);
    }
  }
  ctx.SetOutput(0, dtype, std::move(out));
  return Status::Ok();
}

/// Concat and ms ConcatTraining (which adds per_input_length: int64 [n], the axis dims).
Status ConcatRule(InferContext& ctx) {
  DataType dtype = DataType::kUndefined;
  const Shape* ref = nullptr;
  size_t ref_index = 0;
  for (size_t i = 0; i < ctx.NumInputs(); ++i) {
    if (dtype == DataType::kUndefined) dtype = ctx.InputType(i);
    const Shape* s = ctx.InputShape(i);
    if (s == nullptr) continue;
    if (ref == nullptr) {
      ref = s;
      ref_index = i;
    } else if (s->size() != ref->size()) {
      return ctx.Error("inputs have different ranks: input " + std::to_string(ref_index) + " " + ShapeToString(*ref) +
                       " has rank " + std::to_string(ref->size()) + ", input " + std::to_string(i) + " " +
                       ShapeToString(*s) + " has rank " + std::to_string(s->size()));
    }
  }
  const bool training = ctx.node().op_type == "ConcatTraining";
  const int64_t n = static_cast<int64_t>(ctx.NumInputs());
  if (ref == nullptr) {
    ctx.SetOutput(0, dtype, std::nullopt);
    if (training) ctx.SetOutput(1, DataType::kInt64, Shape{SymExpr(n)});
    return Status::Ok();
  }
  const auto rank = static_cast<int64_t>(ref->size());
  const int64_t raw_axis = ctx.node().GetInt("axis", 0);
  auto axis = NormalizeAxis(raw_axis, rank);
  if (!axis.has_value()) {
    return ctx.Error("Concat axis " + std::to_string(raw_axis) + " out of range for rank " + std::to_string(rank));
  }
  Shape out(ref->size());
  std::vector<SymExpr> lengths;
  bool all_known = true;
  SymExpr total(0);
  for (size_t k = 0; k < ref->size(); ++k) {
    std::optional<SymExpr> chosen;
    for (size_t i = 0; i < ctx.NumInputs(); ++i) {
      const Shape* s = ctx.InputShape(i);
      if (s == nullptr) {
        if (static_cast<int64_t>(k) == *axis) all_known = false;
        continue;
      }
      const SymExpr& d = (*s)[k];
      if (static_cast<int64_t>(k) == *axis) {
        total = total + d;
        lengths.push_back(d);
      } else if (!chosen.has_value() || (!chosen->IsConstant() && d.IsConstant())) {
        chosen = d;
      } else if (chosen->IsConstant() && d.IsConstant() && !(d == *chosen)) {
        ctx.Diagnose(ctx.OutputName(0), "Concat inputs differ in dim " + std::to_string(k) + ": " +
                                            chosen->ToString() + " vs " + d.ToString());
      }
    }
    if (static_cast<int64_t>(k) == *axis) {
      out[k] = all_known ? total : ctx.FreshDim(0, k, "Concat input of unknown shape");
    } else {
      out[k] = *chosen;
    }
  }
  ctx.SetOutput(0, dtype, std::move(out));
  if (training && ctx.HasOutput(1)) {
    ctx.SetOutput(1, DataType::kInt64, Shape{SymExpr(n)});
    if (all_known) ctx.SetOutputValues(1, std::move(lengths));
  }
  return Status::Ok();
}

/// Split / ms SplitTraining: sizes from the 'split' attribute or input, else num_outputs
/// (opset 18: ceil-sized chunks) or an equal split.
Status SplitRule(InferContext& ctx) {
  const Shape* in = ctx.InputShape(0);
  const DataType dtype = ctx.InputType(0);
  const size_t n = ctx.NumOutputs();
  if (in == nullptr) {
    for (size_t o = 0; o < n; ++o) ctx.SetOutput(o, dtype, std::nullopt);
    return Status::Ok();
  }
  const auto rank = static_cast<int64_t>(in->size());
  const int64_t raw_axis = ctx.node().GetInt("axis", 0);
  auto axis = NormalizeAxis(raw_axis, rank);
  if (!axis.has_value()) {
    return ctx.Error("Split axis " + std::to_string(raw_axis) + " out of range for rank " + std::to_string(rank));
  }
  const SymExpr d = (*in)[*axis];
  std::vector<std::optional<SymExpr>> sizes(n);
  const std::vector<SymExpr>* split_values = ctx.InputValues(1);
  std::vector<int64_t> split_attr = ctx.node().GetInts("split");
  if (!split_attr.empty()) {
    for (size_t o = 0; o < n && o < split_attr.size(); ++o) sizes[o] = SymExpr(split_attr[o]);
  } else if (split_values != nullptr && !split_values->empty()) {
    for (size_t o = 0; o < n && o < split_values->size(); ++o) sizes[o] = (*split_values)[o];
  } else if (ctx.HasInput(1) && split_values == nullptr) {
    // split given as an input whose values are unknown: each size stays unresolved.
  } else if (n > 0) {
    const auto parts = SymExpr(static_cast<int64_t>(n));
    if (ctx.node().HasAttr("num_outputs")) {
      const SymExpr chunk = SymExpr::CeilDiv(d, parts);
      for (size_t o = 0; o + 1 < n; ++o) sizes[o] = chunk;
      sizes[n - 1] = d - chunk * SymExpr(static_cast<int64_t>(n - 1));
    } else if (auto dc = d.AsInt(); dc.has_value() && ctx.node().op_type == "SplitTraining") {
      // SplitTraining with an empty split: remainder goes to the first outputs.
      const int64_t base = *dc / static_cast<int64_t>(n);
      const int64_t rem = *dc % static_cast<int64_t>(n);
      for (size_t o = 0; o < n; ++o) sizes[o] = SymExpr(base + (static_cast<int64_t>(o) < rem ? 1 : 0));
    } else {
      const SymExpr each = DivideDims(d, parts);
      for (size_t o = 0; o < n; ++o) sizes[o] = each;
    }
  }
  for (size_t o = 0; o < n; ++o) {
    if (!ctx.HasOutput(o)) continue;
    Shape out = *in;
    out[*axis] = sizes[o].has_value() ? *sizes[o] : ctx.FreshDim(o, *axis, "Split sizes not constant");
    ctx.SetOutput(o, dtype, std::move(out));
  }
  return Status::Ok();
}

Status ExpandRule(InferContext& ctx) {
  const Shape* in = ctx.InputShape(0);
  const DataType dtype = ctx.InputType(0);
  const std::vector<SymExpr>* target = ctx.InputValues(1);
  if (in != nullptr && target != nullptr) {
    BroadcastResult r = BroadcastShapes({in, target}, &ctx.broadcast_notes());
    for (const auto& c : r.conflicts) ctx.Diagnose(ctx.OutputName(0), "Expand shape does not broadcast (" + c + ")");
    ctx.SetOutput(0, dtype, std::move(r.shape));
    return Status::Ok();
  }
  IntListArg arg = ReadIntList(ctx, "", 1);
  if (in == nullptr || !arg.length.has_value()) {
    ctx.SetOutput(0, dtype, std::nullopt);
    if (in != nullptr) ctx.Diagnose(ctx.OutputName(0), "rank unresolved: Expand shape input of unknown length");
    return Status::Ok();
  }
  const size_t rank = std::max(in->size(), static_cast<size_t>(*arg.length));
  Shape out(rank);
  for (size_t k = 0; k < rank; ++k) {
    const size_t from_right = rank - 1 - k;
    if (from_right < in->size()) {
      const SymExpr& d = (*in)[in->size() - 1 - from_right];
      auto v = d.AsInt();
      if (v.has_value() && *v != 1) {
        out[k] = d;
        continue;
      }
    }
    out[k] = ctx.FreshDim(0, k, "Expand shape input not constant");
  }
  ctx.SetOutput(0, dtype, std::move(out));
  return Status::Ok();
}

Status TileRule(InferContext& ctx) {
  const Shape* in = ctx.InputShape(0);
  const DataType dtype = ctx.InputType(0);
  if (in == nullptr) {
    ctx.SetOutput(0, dtype, std::nullopt);
    return Status::Ok();
  }
  const std::vector<SymExpr>* repeats = ctx.InputValues(1);
  if (repeats != nullptr && repeats->size() != in->size()) {
    return ctx.Error("Tile repeats has " + std::to_string(repeats->size()) + " entries for rank " +
                     std::to_string(in->size()));
  }
  Shape out(in->size());
  for (size_t k = 0; k < in->size(); ++k) {
    out[k] = repeats != nullptr ? (*in)[k] * (*repeats)[k] : ctx.FreshDim(0, k, "Tile repeats not constant");
  }
  ctx.SetOutput(0, dtype, std::move(out));
  return Status::Ok();
}

Status DepthSpaceRule(InferContext& ctx) {
  const Shape* in = ctx.InputShape(0);
  const int64_t b = ctx.node().GetInt("blocksize", 1);
  if (in == nullptr || in->size() != 4 || b <= 0) {
    ctx.SetOutput(0, ctx.InputType(0), std::nullopt);
    return Status::Ok();
  }
  const SymExpr bb(b);
  const SymExpr b2(b * b);
  Shape out = *in;
  if (ctx.node().op_type == "DepthToSpace") {
    out[1] = DivideDims((*in)[1], b2);
    out[2] = (*in)[2] * bb;
    out[3] = (*in)[3] * bb;
  } else {
    out[1] = (*in)[1] * b2;
    for (size_t k = 2; k < 4; ++k) {
      out[k] = DivideDims((*in)[k], bb);
    }
  }
  ctx.SetOutput(0, ctx.InputType(0), std::move(out));
  return Status::Ok();
}

}  // namespace

static void RegisterTensorRules(RuleRegistry& r) {
  r.Add("", "Reshape", ReshapeRule);
  r.Add("", "Flatten", FlattenRule);
  r.Add("", "Transpose", TransposeRule);
  r.Add("", "Squeeze", SqueezeRule);
  r.Add("", "Unsqueeze", UnsqueezeRule);
  r.Add("", "Concat", ConcatRule);
  r.Add(kMsDomain, "ConcatTraining", ConcatRule);
  r.Add("", "Split", SplitRule);
  r.Add(kMsDomain, "SplitTraining", SplitRule);
  r.Add("", "Expand", ExpandRule);
  r.Add("", "Tile", TileRule);
  r.Add("", "DepthToSpace", DepthSpaceRule);
  r.Add("", "SpaceToDepth", DepthSpaceRule);
}

}  // namespace memopt::shape

MEMOPT_OPS(layout, layout_shape) {
  memopt::shape::RuleRegistry r(ops);
  memopt::shape::RegisterTensorRules(r);
}
