// Indexing and size-changing ops: Slice, Gather (+ ms ShrunkenGather), GatherElements,
// GatherND, Scatter*, Pad, TopK, OneHot, NonZero, Compress, Unique, Resize, Upsample.
#include <cmath>

#include "ir/op_registry.h"
#include "shape/rule_registry.h"

namespace memopt::shape {

namespace {

Status SameAsData(InferContext& ctx) {
  ctx.CopyInputToOutput(0, 0);
  return Status::Ok();
}

/// Slice-1 (attributes) and Slice-10+ (inputs starts, ends, axes?, steps?).
Status SliceRule(InferContext& ctx) {
  const Shape* in = ctx.InputShape(0);
  const DataType dtype = ctx.InputType(0);
  if (in == nullptr) {
    ctx.SetOutput(0, dtype, std::nullopt);
    return Status::Ok();
  }
  const auto rank = static_cast<int64_t>(in->size());
  std::optional<std::vector<SymExpr>> starts;
  std::optional<std::vector<SymExpr>> ends;
  std::optional<std::vector<int64_t>> axes;
  std::optional<std::vector<int64_t>> steps;
  const Node& node = ctx.node();
  if (node.HasAttr("starts") || node.HasAttr("ends")) {
    starts.emplace();
    ends.emplace();
    for (int64_t v : node.GetInts("starts")) starts->emplace_back(v);
    for (int64_t v : node.GetInts("ends")) ends->emplace_back(v);
    if (node.HasAttr("axes")) axes = node.GetInts("axes");
  } else {
    if (const auto* v = ctx.InputValues(1)) starts = *v;
    if (const auto* v = ctx.InputValues(2)) ends = *v;
    if (ctx.HasInput(3)) axes = ctx.InputInts(3);
    if (ctx.HasInput(4)) steps = ctx.InputInts(4);
    if ((ctx.HasInput(3) && !axes.has_value()) || (ctx.HasInput(4) && !steps.has_value())) {
      ctx.SetOutput(0, dtype, ctx.FreshShape(0, in->size(), "Slice axes/steps not constant"));
      return Status::Ok();
    }
  }
  Shape out = *in;
  if (!starts.has_value() || !ends.has_value() || starts->size() != ends->size()) {
    // Which dims change depends on the axes; without starts/ends each listed axis is unknown.
    if (axes.has_value()) {
      for (int64_t a : *axes) {
        if (auto axis = NormalizeAxis(a, rank)) out[*axis] = ctx.FreshDim(0, *axis, "Slice starts/ends not constant");
      }
    } else {
      ctx.SetOutput(0, dtype, ctx.FreshShape(0, in->size(), "Slice starts/ends not constant"));
      return Status::Ok();
    }
    ctx.SetOutput(0, dtype, std::move(out));
    return Status::Ok();
  }
  const size_t count = starts->size();
  if (!axes.has_value()) {
    axes.emplace();
    for (size_t i = 0; i < count; ++i) axes->push_back(static_cast<int64_t>(i));
  }
  if (!steps.has_value()) steps = std::vector<int64_t>(count, 1);
  if (axes->size() != count || steps->size() != count) {
    ctx.Diagnose(ctx.OutputName(0), "Slice starts/ends/axes/steps lengths differ");
    ctx.SetOutput(0, dtype, std::nullopt);
    return Status::Ok();
  }
  for (size_t i = 0; i < count; ++i) {
    auto axis = NormalizeAxis((*axes)[i], rank);
    if (!axis.has_value() || (*steps)[i] == 0) {
      ctx.Diagnose(ctx.OutputName(0), "Slice axis " + std::to_string((*axes)[i]) + " or step invalid for rank " +
                                          std::to_string(rank));
      ctx.SetOutput(0, dtype, std::nullopt);
      return Status::Ok();
    }
    out[*axis] = SlicedDim((*in)[*axis], (*starts)[i], (*ends)[i], (*steps)[i]);
  }
  ctx.SetOutput(0, dtype, std::move(out));
  return Status::Ok();
}

/// Gather: data[:axis] + indices.shape + data[axis+1:].
Status GatherRule(InferContext& ctx) {
  const Shape* data = ctx.InputShape(0);
  const Shape* indices = ctx.InputShape(1);
  const DataType dtype = ctx.InputType(0);
  if (data == nullptr || indices == nullptr) {
    ctx.SetOutput(0, dtype, std::nullopt);
    return Status::Ok();
  }
  const int64_t raw_axis = ctx.node().GetInt("axis", 0);
  auto axis = NormalizeAxis(raw_axis, static_cast<int64_t>(data->size()));
  if (!axis.has_value()) {
    return ctx.Error("Gather axis " + std::to_string(raw_axis) + " out of range for rank " +
                                        std::to_string(data->size()));
  }
  Shape out(data->begin(), data->begin() + *axis);
  out.insert(out.end(), indices->begin(), indices->end());
  out.insert(out.end(), data->begin() + *axis + 1, data->end());
  ctx.SetOutput(0, dtype, std::move(out));
  return Status::Ok();
}

Status GatherElementsRule(InferContext& ctx) {
  const Shape* indices = ctx.InputShape(1);
  ctx.SetOutput(0, ctx.InputType(0), indices ? std::optional<Shape>(*indices) : std::nullopt);
  return Status::Ok();
}

/// GatherND: indices[:-1] + data[batch_dims + k:], k = last dim of indices.
Status GatherNDRule(InferContext& ctx) {
  const Shape* data = ctx.InputShape(0);
  const Shape* indices = ctx.InputShape(1);
  const DataType dtype = ctx.InputType(0);
  const int64_t b = ctx.node().GetInt("batch_dims", 0);
  std::optional<int64_t> k;
  if (indices != nullptr && !indices->empty()) k = indices->back().AsInt();
  if (data == nullptr || indices == nullptr || !k.has_value() || *k < 0 || b < 0 ||
      static_cast<size_t>(b + *k) > data->size()) {
    ctx.SetOutput(0, dtype, std::nullopt);
    return Status::Ok();
  }
  Shape out(indices->begin(), indices->end() - 1);
  out.insert(out.end(), data->begin() + b + *k, data->end());
  ctx.SetOutput(0, dtype, std::move(out));
  return Status::Ok();
}

/// Pad-1/2 (pads attribute) and Pad-11+ (pads input, optional axes input since 18).
Status PadRule(InferContext& ctx) {
  const Shape* in = ctx.InputShape(0);
  const DataType dtype = ctx.InputType(0);
  if (in == nullptr) {
    ctx.SetOutput(0, dtype, std::nullopt);
    return Status::Ok();
  }
  const auto rank = static_cast<int64_t>(in->size());
  std::optional<std::vector<SymExpr>> pads;
  if (ctx.node().HasAttr("pads") || ctx.node().HasAttr("paddings")) {
    pads.emplace();
    auto attr = ctx.node().HasAttr("pads") ? ctx.node().GetInts("pads") : ctx.node().GetInts("paddings");
    for (int64_t v : attr) pads->emplace_back(v);
  } else if (const auto* v = ctx.InputValues(1)) {
    pads = *v;
  }
  std::vector<int64_t> axes;
  if (ctx.HasInput(3)) {
    auto a = ctx.InputInts(3);
    if (!a.has_value()) pads.reset();
    else axes = *a;
  } else {
    for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
  }
  if (!pads.has_value() || pads->size() != 2 * axes.size()) {
    if (pads.has_value()) ctx.Diagnose(ctx.OutputName(0), "Pad pads length does not match the axes");
    ctx.SetOutput(0, dtype, ctx.FreshShape(0, in->size(), "Pad pads not constant"));
    return Status::Ok();
  }
  Shape out = *in;
  const size_t n = axes.size();
  for (size_t i = 0; i < n; ++i) {
    auto axis = NormalizeAxis(axes[i], rank);
    if (!axis.has_value()) {
      ctx.SetOutput(0, dtype, std::nullopt);
      return Status::Ok();
    }
    out[*axis] = out[*axis] + (*pads)[i] + (*pads)[i + n];
  }
  ctx.SetOutput(0, dtype, std::move(out));
  return Status::Ok();
}

Status TopKRule(InferContext& ctx) {
  const Shape* in = ctx.InputShape(0);
  const DataType dtype = ctx.InputType(0);
  if (in == nullptr) {
    ctx.SetOutput(0, dtype, std::nullopt);
    ctx.SetOutput(1, DataType::kInt64, std::nullopt);
    return Status::Ok();
  }
  const int64_t raw_axis = ctx.node().GetInt("axis", -1);
  auto axis = NormalizeAxis(raw_axis, static_cast<int64_t>(in->size()));
  if (!axis.has_value()) {
    ctx.SetOutput(0, dtype, std::nullopt);
    ctx.SetOutput(1, DataType::kInt64, std::nullopt);
    return Status::Ok();
  }
  Shape out = *in;
  if (ctx.node().HasAttr("k")) {
    out[*axis] = SymExpr(ctx.node().GetInt("k", 0));
  } else if (const auto* k = ctx.InputValues(1); k != nullptr && k->size() == 1) {
    out[*axis] = (*k)[0];
  } else {
    out[*axis] = ctx.FreshDim(0, *axis, "TopK k not constant");
  }
  ctx.SetOutput(0, dtype, out);
  ctx.SetOutput(1, DataType::kInt64, std::move(out));
  return Status::Ok();
}

/// OneHot: indices shape with depth inserted at axis (default -1: appended); dtype of values.
Status OneHotRule(InferContext& ctx) {
  const Shape* indices = ctx.InputShape(0);
  const DataType dtype = ctx.InputType(2);
  if (indices == nullptr) {
    ctx.SetOutput(0, dtype, std::nullopt);
    return Status::Ok();
  }
  const auto out_rank = static_cast<int64_t>(indices->size()) + 1;
  const int64_t raw_axis = ctx.node().GetInt("axis", -1);
  auto axis = NormalizeAxis(raw_axis, out_rank);
  if (!axis.has_value()) {
    ctx.SetOutput(0, dtype, std::nullopt);
    return Status::Ok();
  }
  Shape out = *indices;
  const auto* depth = ctx.InputValues(1);
  SymExpr d = (depth != nullptr && depth->size() == 1) ? (*depth)[0] : ctx.FreshDim(0, *axis, "OneHot depth not constant");
  out.insert(out.begin() + *axis, d);
  ctx.SetOutput(0, dtype, std::move(out));
  return Status::Ok();
}

Status NonZeroRule(InferContext& ctx) {
  auto rank = ctx.InputRank(0);
  Shape out{rank.has_value() ? SymExpr(*rank) : ctx.FreshDim(0, 0, "NonZero of an input of unknown rank"),
            ctx.DataDependentDim(0, 1, "nonzero", "data-dependent: number of non-zero elements")};
  ctx.SetOutput(0, DataType::kInt64, std::move(out));
  return Status::Ok();
}

Status CompressRule(InferContext& ctx) {
  const Shape* in = ctx.InputShape(0);
  const DataType dtype = ctx.InputType(0);
  if (!ctx.node().HasAttr("axis")) {
    ctx.SetOutput(0, dtype, Shape{ctx.FreshDim(0, 0, "data-dependent: Compress count")});
    return Status::Ok();
  }
  if (in == nullptr) {
    ctx.SetOutput(0, dtype, std::nullopt);
    return Status::Ok();
  }
  auto axis = NormalizeAxis(ctx.node().GetInt("axis", 0), static_cast<int64_t>(in->size()));
  if (!axis.has_value()) {
    ctx.SetOutput(0, dtype, std::nullopt);
    return Status::Ok();
  }
  Shape out = *in;
  out[*axis] = ctx.FreshDim(0, *axis, "data-dependent: Compress count");
  ctx.SetOutput(0, dtype, std::move(out));
  return Status::Ok();
}

Status UniqueRule(InferContext& ctx) {
  const Shape* in = ctx.InputShape(0);
  const DataType dtype = ctx.InputType(0);
  const SymExpr count = ctx.FreshDim(0, 0, "data-dependent: number of unique elements");
  if (!ctx.node().HasAttr("axis") || in == nullptr) {
    ctx.SetOutput(0, dtype, Shape{count});
    ctx.SetOutput(2, DataType::kInt64, in ? std::optional<Shape>(Shape{NumElements(*in)}) : std::nullopt);
  } else {
    auto axis = NormalizeAxis(ctx.node().GetInt("axis", 0), static_cast<int64_t>(in->size()));
    if (!axis.has_value()) {
      ctx.SetOutput(0, dtype, std::nullopt);
    } else {
      Shape out = *in;
      out[*axis] = count;
      ctx.SetOutput(0, dtype, std::move(out));
      ctx.SetOutput(2, DataType::kInt64, Shape{(*in)[*axis]});
    }
  }
  ctx.SetOutput(1, DataType::kInt64, Shape{count});
  ctx.SetOutput(3, DataType::kInt64, Shape{count});
  return Status::Ok();
}

/// A float scale as a small exact fraction num/den, if there is one.
std::optional<Rational> ScaleAsRational(double scale) {
  for (int64_t den = 1; den <= 1024; ++den) {
    const double num = scale * static_cast<double>(den);
    if (std::fabs(num - std::round(num)) < 1e-6 && std::fabs(num) < 1e12) {
      return Rational::Make(static_cast<int64_t>(std::llround(num)), den);
    }
  }
  return std::nullopt;
}

/// Float values of `v` when a Constant node makes it, or a 1-D Concat, Identity or Cast of such
/// (TorchScript writes Resize's scales as Concat(Constant [1, 1], Constant [2, 2])); float
/// initializers are not decoded.
std::optional<std::vector<double>> ConstantFloatsOf(const Graph& graph, ValueId v, int depth = 0) {
  if (v == kNone || depth > 8 || graph.value(v).producer == kNone) return std::nullopt;
  const Node& producer = graph.node(graph.value(v).producer);
  if (!producer.domain.empty()) return std::nullopt;
  if (producer.op_type == "Constant") {
    if (const onnx::TensorProto* t = producer.GetTensor("value")) return DecodeFloatTensor(*t, 64);
    if (producer.HasAttr("value_floats")) {
      std::vector<double> out;
      for (const auto& attr : producer.proto.attribute()) {
        if (attr.name() == "value_floats") out.assign(attr.floats().begin(), attr.floats().end());
      }
      return out;
    }
    return std::nullopt;
  }
  if ((producer.op_type == "Identity" || producer.op_type == "Cast") && !producer.inputs.empty()) {
    return ConstantFloatsOf(graph, producer.inputs[0], depth + 1);
  }
  if (producer.op_type == "Concat" && producer.GetInt("axis", 0) == 0) {
    std::vector<double> out;
    for (ValueId in : producer.inputs) {
      auto part = ConstantFloatsOf(graph, in, depth + 1);
      if (!part.has_value()) return std::nullopt;
      out.insert(out.end(), part->begin(), part->end());
    }
    return out;
  }
  return std::nullopt;
}

std::optional<std::vector<double>> ConstantFloats(const InferContext& ctx, size_t input) {
  if (!ctx.HasInput(input)) return std::nullopt;
  return ConstantFloatsOf(ctx.graph(), ctx.node().inputs[input]);
}

/// Resize (sizes or scales input; axes attribute since 18) and Upsample (scales attribute or input).
Status ResizeRule(InferContext& ctx) {
  const Shape* in = ctx.InputShape(0);
  const DataType dtype = ctx.InputType(0);
  if (in == nullptr) {
    ctx.SetOutput(0, dtype, std::nullopt);
    return Status::Ok();
  }
  const auto rank = static_cast<int64_t>(in->size());
  std::vector<int64_t> axes = ctx.node().GetInts("axes");
  if (axes.empty()) {
    for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
  }
  const bool is_upsample = ctx.node().op_type == "Upsample";
  const size_t scales_input = (is_upsample || ctx.opset() < 11) ? 1 : 2;
  Shape out = *in;
  if (!is_upsample && ctx.HasInput(3)) {
    const auto* sizes = ctx.InputValues(3);
    if (sizes != nullptr && sizes->size() == axes.size()) {
      for (size_t i = 0; i < axes.size(); ++i) {
        if (auto axis = NormalizeAxis(axes[i], rank)) out[*axis] = (*sizes)[i];
      }
      ctx.SetOutput(0, dtype, std::move(out));
      return Status::Ok();
    }
  }
  std::optional<std::vector<double>> scales;
  if (ctx.node().HasAttr("scales")) {
    scales.emplace();
    for (const auto& attr : ctx.node().proto.attribute()) {
      if (attr.name() == "scales") scales->assign(attr.floats().begin(), attr.floats().end());
    }
  } else if (ctx.HasInput(scales_input)) {
    scales = ConstantFloats(ctx, scales_input);
  }
  if (!scales.has_value() || scales->size() != axes.size()) {
    ctx.SetOutput(0, dtype, ctx.FreshShape(0, in->size(), "Resize scales/sizes not constant"));
    return Status::Ok();
  }
  for (size_t i = 0; i < axes.size(); ++i) {
    auto axis = NormalizeAxis(axes[i], rank);
    if (!axis.has_value()) continue;
    const double scale = (*scales)[i];
    const SymExpr& d = (*in)[*axis];
    if (auto c = d.AsInt(); c.has_value()) {
      out[*axis] = SymExpr(static_cast<int64_t>(std::floor(static_cast<double>(*c) * scale)));
    } else if (auto r = ScaleAsRational(scale); r.has_value()) {
      out[*axis] = r->den == 1 ? d * SymExpr(r->num) : SymExpr::FloorDiv(d * SymExpr(r->num), SymExpr(r->den));
    } else {
      out[*axis] = ctx.FreshDim(0, *axis, "Resize scale is not a simple fraction");
    }
  }
  ctx.SetOutput(0, dtype, std::move(out));
  return Status::Ok();
}

Status NonMaxSuppressionRule(InferContext& ctx) {
  ctx.SetOutput(0, DataType::kInt64, Shape{ctx.FreshDim(0, 0, "data-dependent: number of selected boxes"), SymExpr(3)});
  return Status::Ok();
}

/// CenterCropPad: the listed axes (default all) take the values of the shape input.
Status CenterCropPadRule(InferContext& ctx) {
  const Shape* in = ctx.InputShape(0);
  const DataType dtype = ctx.InputType(0);
  if (in == nullptr) {
    ctx.SetOutput(0, dtype, std::nullopt);
    return Status::Ok();
  }
  const auto rank = static_cast<int64_t>(in->size());
  std::vector<int64_t> axes = ctx.node().GetInts("axes");
  if (axes.empty()) {
    for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
  }
  const auto* target = ctx.InputValues(1);
  Shape out = *in;
  for (size_t i = 0; i < axes.size(); ++i) {
    auto axis = NormalizeAxis(axes[i], rank);
    if (!axis.has_value()) continue;
    out[*axis] = target != nullptr && target->size() == axes.size() ? (*target)[i]
                                                                     : ctx.FreshDim(0, *axis, "CenterCropPad shape not constant");
  }
  ctx.SetOutput(0, dtype, std::move(out));
  return Status::Ok();
}

}  // namespace

static void RegisterIndexRules(RuleRegistry& r) {
  r.Add("", "NonMaxSuppression", NonMaxSuppressionRule);
  r.Add("", "CenterCropPad", CenterCropPadRule);
  r.Add("", "Slice", SliceRule);
  r.Add("", "Gather", GatherRule);
  r.Add(kMsDomain, "ShrunkenGather", GatherRule);
  r.Add("", "GatherElements", GatherElementsRule);
  r.Add("", "GatherND", GatherNDRule);
  for (const char* op : {"ScatterND", "ScatterElements", "Scatter"}) r.Add("", op, SameAsData);
  r.Add("", "Pad", PadRule);
  r.Add("", "TopK", TopKRule);
  r.Add("", "OneHot", OneHotRule);
  r.Add("", "NonZero", NonZeroRule);
  r.Add("", "Compress", CompressRule);
  r.Add("", "Unique", UniqueRule);
  r.Add("", "Resize", ResizeRule);
  r.Add("", "Upsample", ResizeRule);
}

}  // namespace memopt::shape

MEMOPT_OPS(index, index_shape) {
  memopt::shape::RuleRegistry r(ops);
  memopt::shape::RegisterIndexRules(r);
}
