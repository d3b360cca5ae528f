// Value propagation through layout-changing ops on small tensors with constant shapes: Gather,
// Slice, Concat / ConcatTraining, Expand, Tile, Transpose (TorchScript's F.pad builds its pads as
// Reshape -> Slice(reversed) -> Transpose -> Reshape of constants), and ReduceSum / ReduceProd / ReduceMax /
// ReduceMin (e.g. ReduceProd(Shape(x)) = numel). Element values may be symbolic; indices, slice
// bounds and axes must be constants.
#include "ir/op_registry.h"
#include "shape/infer_context.h"
#include "shape/rule_registry.h"
#include "shape/value_util.h"

namespace memopt::shape {

namespace {

struct ConstTensor {
  const std::vector<SymExpr>* values = nullptr;
  std::vector<int64_t> dims;
};

/// Values and constant dims of input i, when both are known and consistent.
std::optional<ConstTensor> InputTensor(const InferContext& ctx, size_t i) {
  const auto* v = ctx.InputValues(i);
  const Shape* s = ctx.InputShape(i);
  if (v == nullptr || s == nullptr) return std::nullopt;
  auto dims = SmallConstDims(*s);
  if (!dims.has_value()) return std::nullopt;
  int64_t numel = 1;
  for (int64_t d : *dims) numel *= d;
  if (numel != static_cast<int64_t>(v->size())) return std::nullopt;
  return ConstTensor{v, std::move(*dims)};
}

int64_t Product(const std::vector<int64_t>& dims, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end && i < dims.size(); ++i) p *= dims[i];
  return p;
}

bool OutputTracked(const InferContext& ctx) { return TracksValues(ctx.OutputInfo(0).dtype); }

/// Gather from Range(start, limit, delta) of a symbolic length n (BLOOM's position ids:
/// Range(0, seq_len)[-1] + 1): element j is start + j * delta, j < 0 counting from n.
Status GatherFromRangeValues(InferContext& ctx, const std::vector<int64_t>& indices) {
  const Value* data = ctx.InputValue(0);
  const Shape* shape = ctx.InputShape(0);
  if (data == nullptr || data->producer == kNone || shape == nullptr || shape->size() != 1) return Status::Ok();
  const Node& range = ctx.graph().node(data->producer);
  if (range.op_type != "Range" || !range.domain.empty() || range.inputs.size() != 3) return Status::Ok();
  const auto& start = ctx.graph().value(range.inputs[0]).known_values;
  const auto& delta = ctx.graph().value(range.inputs[2]).known_values;
  if (!start.has_value() || !delta.has_value() || start->size() != 1 || delta->size() != 1) return Status::Ok();
  std::vector<SymExpr> out;
  for (int64_t j : indices) {
    const SymExpr position = j >= 0 ? SymExpr(j) : (*shape)[0] + SymExpr(j);
    out.push_back((*start)[0] + position * (*delta)[0]);
  }
  ctx.SetOutputValues(0, std::move(out));
  return Status::Ok();
}

Status GatherValues(InferContext& ctx) {
  auto data = InputTensor(ctx, 0);
  auto indices = ctx.InputInts(1);
  if (indices.has_value() && !data.has_value() && OutputTracked(ctx) && ctx.node().GetInt("axis", 0) == 0) {
    return GatherFromRangeValues(ctx, *indices);
  }
  if (!data.has_value() || !indices.has_value() || !OutputTracked(ctx)) return Status::Ok();
  auto axis = NormalizeAxis(ctx.node().GetInt("axis", 0), static_cast<int64_t>(data->dims.size()));
  if (!axis.has_value()) return Status::Ok();
  const int64_t outer = Product(data->dims, 0, *axis);
  const int64_t n = data->dims[*axis];
  const int64_t inner = Product(data->dims, *axis + 1, data->dims.size());
  if (outer * static_cast<int64_t>(indices->size()) * inner > kMaxValueElements) return Status::Ok();
  std::vector<SymExpr> out;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j : *indices) {
      if (j < 0) j += n;
      if (j < 0 || j >= n) return Status::Ok();
      for (int64_t i = 0; i < inner; ++i) out.push_back((*data->values)[(o * n + j) * inner + i]);
    }
  }
  ctx.SetOutputValues(0, std::move(out));
  return Status::Ok();
}

/// Visits every multi-index of `lists` (one index list per dim) in row-major order.
template <typename F>
void ForEachIndex(const std::vector<std::vector<int64_t>>& lists, F&& visit) {
  for (const auto& l : lists) {
    if (l.empty()) return;
  }
  std::vector<size_t> pos(lists.size(), 0);
  std::vector<int64_t> index(lists.size());
  while (true) {
    for (size_t k = 0; k < lists.size(); ++k) index[k] = lists[k][pos[k]];
    visit(index);
    size_t k = lists.size();
    while (k > 0) {
      --k;
      if (++pos[k] < lists[k].size()) break;
      pos[k] = 0;
      if (k == 0) return;
    }
    if (lists.empty()) return;
  }
}

Status TransposeValues(InferContext& ctx) {
  auto data = InputTensor(ctx, 0);
  if (!data.has_value() || !OutputTracked(ctx)) return Status::Ok();
  const size_t rank = data->dims.size();
  std::vector<int64_t> perm = ctx.node().GetInts("perm");
  if (perm.empty()) {
    for (size_t k = 0; k < rank; ++k) perm.push_back(static_cast<int64_t>(rank - 1 - k));
  }
  if (perm.size() != rank) return Status::Ok();
  std::vector<std::vector<int64_t>> lists(rank);  // output dim k runs over input dim perm[k]
  for (size_t k = 0; k < rank; ++k) {
    auto axis = NormalizeAxis(perm[k], static_cast<int64_t>(rank));
    if (!axis.has_value()) return Status::Ok();
    perm[k] = *axis;
    for (int64_t i = 0; i < data->dims[*axis]; ++i) lists[k].push_back(i);
  }
  const std::vector<int64_t> strides = RowMajorStrides(data->dims);
  std::vector<SymExpr> out;
  out.reserve(data->values->size());
  ForEachIndex(lists, [&](const std::vector<int64_t>& index) {
    int64_t flat = 0;
    for (size_t k = 0; k < rank; ++k) flat += index[k] * strides[perm[k]];
    out.push_back((*data->values)[flat]);
  });
  if (out.size() != data->values->size()) return Status::Ok();
  ctx.SetOutputValues(0, std::move(out));
  return Status::Ok();
}

Status SliceValues(InferContext& ctx) {
  auto data = InputTensor(ctx, 0);
  if (!data.has_value() || !OutputTracked(ctx)) return Status::Ok();
  const Node& node = ctx.node();
  std::optional<std::vector<int64_t>> starts, ends, axes, steps;
  if (node.HasAttr("starts")) {
    starts = node.GetInts("starts");
    ends = node.GetInts("ends");
    if (node.HasAttr("axes")) axes = node.GetInts("axes");
  } else {
    starts = ctx.InputInts(1);
    ends = ctx.InputInts(2);
    if (ctx.HasInput(3)) {
      axes = ctx.InputInts(3);
      if (!axes.has_value()) return Status::Ok();
    }
    if (ctx.HasInput(4)) {
      steps = ctx.InputInts(4);
      if (!steps.has_value()) return Status::Ok();
    }
  }
  if (!starts.has_value() || !ends.has_value() || starts->size() != ends->size()) return Status::Ok();
  const auto rank = static_cast<int64_t>(data->dims.size());
  std::vector<std::vector<int64_t>> lists(data->dims.size());
  for (size_t k = 0; k < lists.size(); ++k) {
    for (int64_t i = 0; i < data->dims[k]; ++i) lists[k].push_back(i);
  }
  for (size_t i = 0; i < starts->size(); ++i) {
    const int64_t a = axes.has_value() ? (i < axes->size() ? (*axes)[i] : rank) : static_cast<int64_t>(i);
    const int64_t step = steps.has_value() ? (i < steps->size() ? (*steps)[i] : 0) : 1;
    auto axis = NormalizeAxis(a, rank);
    if (!axis.has_value() || step == 0) return Status::Ok();
    lists[*axis] = SliceIndices(data->dims[*axis], (*starts)[i], (*ends)[i], step);
  }
  const std::vector<int64_t> strides = RowMajorStrides(data->dims);
  std::vector<SymExpr> out;
  ForEachIndex(lists, [&](const std::vector<int64_t>& index) {
    int64_t flat = 0;
    for (size_t k = 0; k < index.size(); ++k) flat += index[k] * strides[k];
    out.push_back((*data->values)[flat]);
  });
  ctx.SetOutputValues(0, std::move(out));
  return Status::Ok();
}

Status ConcatValues(InferContext& ctx) {
  if (!OutputTracked(ctx)) return Status::Ok();
  std::vector<ConstTensor> inputs;
  for (size_t i = 0; i < ctx.NumInputs(); ++i) {
    auto t = InputTensor(ctx, i);
    if (!t.has_value()) return Status::Ok();
    inputs.push_back(std::move(*t));
  }
  if (inputs.empty()) return Status::Ok();
  const auto rank = static_cast<int64_t>(inputs[0].dims.size());
  auto axis = NormalizeAxis(ctx.node().GetInt("axis", 0), rank);
  if (!axis.has_value()) return Status::Ok();
  const int64_t outer = Product(inputs[0].dims, 0, *axis);
  std::vector<SymExpr> out;
  for (int64_t o = 0; o < outer; ++o) {
    for (const ConstTensor& t : inputs) {
      if (static_cast<int64_t>(t.dims.size()) != rank || Product(t.dims, 0, *axis) != outer) return Status::Ok();
      const int64_t block = Product(t.dims, *axis, t.dims.size());
      for (int64_t i = 0; i < block; ++i) out.push_back((*t.values)[o * block + i]);
    }
  }
  ctx.SetOutputValues(0, std::move(out));
  return Status::Ok();
}

Status ExpandValues(InferContext& ctx) {
  auto in = InputTensor(ctx, 0);
  const TensorInfo& info = ctx.OutputInfo(0);
  if (!in.has_value() || !info.shape.has_value() || !OutputTracked(ctx)) return Status::Ok();
  auto out_dims = SmallConstDims(*info.shape);
  if (!out_dims.has_value() || !BroadcastsTo(in->dims, *out_dims)) return Status::Ok();
  std::vector<SymExpr> out;
  for (int64_t src : BroadcastIndexMap(*out_dims, in->dims)) out.push_back((*in->values)[src]);
  ctx.SetOutputValues(0, std::move(out));
  return Status::Ok();
}

Status TileValues(InferContext& ctx) {
  auto in = InputTensor(ctx, 0);
  const TensorInfo& info = ctx.OutputInfo(0);
  if (!in.has_value() || !info.shape.has_value() || !OutputTracked(ctx)) return Status::Ok();
  auto out_dims = SmallConstDims(*info.shape);
  if (!out_dims.has_value() || out_dims->size() != in->dims.size()) return Status::Ok();
  std::vector<std::vector<int64_t>> lists(out_dims->size());
  for (size_t k = 0; k < lists.size(); ++k) {
    if (in->dims[k] == 0) return Status::Ok();
    for (int64_t i = 0; i < (*out_dims)[k]; ++i) lists[k].push_back(i % in->dims[k]);
  }
  const std::vector<int64_t> strides = RowMajorStrides(in->dims);
  std::vector<SymExpr> out;
  ForEachIndex(lists, [&](const std::vector<int64_t>& index) {
    int64_t flat = 0;
    for (size_t k = 0; k < index.size(); ++k) flat += index[k] * strides[k];
    out.push_back((*in->values)[flat]);
  });
  ctx.SetOutputValues(0, std::move(out));
  return Status::Ok();
}

/// ReduceSum / ReduceProd / ReduceMax / ReduceMin over constant axes.
Status ReduceValues(InferContext& ctx) {
  auto in = InputTensor(ctx, 0);
  if (!in.has_value() || !OutputTracked(ctx)) return Status::Ok();
  IntListArg axes = ReadIntList(ctx, "axes", 1);
  if (axes.present && !axes.values.has_value()) return Status::Ok();
  const auto rank = static_cast<int64_t>(in->dims.size());
  std::vector<bool> reduce(in->dims.size(), false);
  if (!axes.present || axes.values->empty()) {
    if (ctx.node().GetInt("noop_with_empty_axes", 0) != 0) {
      ctx.SetOutputValues(0, *in->values);
      return Status::Ok();
    }
    reduce.assign(in->dims.size(), true);
  } else {
    for (int64_t a : *axes.values) {
      auto axis = NormalizeAxis(a, rank);
      if (!axis.has_value()) return Status::Ok();
      reduce[*axis] = true;
    }
  }
  // Output dims with reduced dims as 1 (the flat order is the same with keepdims=0).
  std::vector<int64_t> out_dims = in->dims;
  for (size_t k = 0; k < out_dims.size(); ++k) {
    if (reduce[k]) out_dims[k] = 1;
  }
  const std::vector<int64_t> out_strides = RowMajorStrides(out_dims);
  const int64_t out_numel = Product(out_dims, 0, out_dims.size());
  std::vector<std::optional<SymExpr>> acc(static_cast<size_t>(out_numel));
  const std::string& op = ctx.node().op_type;
  std::vector<int64_t> index(in->dims.size(), 0);
  for (size_t flat = 0; flat < in->values->size(); ++flat) {
    int64_t dst = 0;
    for (size_t k = 0; k < index.size(); ++k) dst += (reduce[k] ? 0 : index[k]) * out_strides[k];
    const SymExpr& v = (*in->values)[flat];
    auto& a = acc[static_cast<size_t>(dst)];
    if (!a.has_value()) {
      a = v;
    } else if (op == "ReduceSum") {
      a = *a + v;
    } else if (op == "ReduceProd") {
      a = *a * v;
    } else if (op == "ReduceMax") {
      a = SymExpr::Max(*a, v);
    } else {
      a = SymExpr::Min(*a, v);
    }
    for (size_t k = index.size(); k-- > 0;) {
      if (++index[k] < in->dims[k]) break;
      index[k] = 0;
    }
  }
  std::vector<SymExpr> out;
  for (auto& a : acc) {
    // An empty reduction gives the identity of the op (0 for sum, 1 for prod).
    out.push_back(a.has_value() ? *a : SymExpr(op == "ReduceProd" ? 1 : 0));
    if (!a.has_value() && (op == "ReduceMax" || op == "ReduceMin")) return Status::Ok();
  }
  ctx.SetOutputValues(0, std::move(out));
  return Status::Ok();
}

}  // namespace

static void RegisterLayoutValueRules(RuleRegistry& r) {
  r.AddValues("", "Gather", GatherValues);
  r.AddValues("", "Slice", SliceValues);
  r.AddValues("", "Transpose", TransposeValues);
  r.AddValues("", "Concat", ConcatValues);
  r.AddValues(kMsDomain, "ConcatTraining", ConcatValues);
  r.AddValues("", "Expand", ExpandValues);
  r.AddValues("", "Tile", TileValues);
  for (const char* op : {"ReduceSum", "ReduceProd", "ReduceMax", "ReduceMin"}) r.AddValues("", op, ReduceValues);
  r.AddValues(kMsDomain, "ReduceSumTraining", ReduceValues);
}

}  // namespace memopt::shape

MEMOPT_OPS(layout, layout_values) {
  memopt::shape::RuleRegistry r(ops);
  memopt::shape::RegisterLayoutValueRules(r);
}
