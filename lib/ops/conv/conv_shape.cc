// Shape rules of the convolutions (Conv, ConvInteger, QLinearConv, ConvTranspose) and the pooling
// ops (MaxPool, AveragePool, LpPool and the global pools). Window attributes are checked once
// (shape/window_attributes.h).
//
// Spatial output size with pads p_b/p_e, stride s, dilation d, kernel k:
//   floor((D + p_b + p_e - (d*(k-1) + 1)) / s) + 1   (ceil for pooling with ceil_mode=1);
//   auto_pad SAME_*: ceil(D / s); VALID: pads 0.
#include <optional>
#include <string>
#include <vector>

#include "ir/op_registry.h"
#include "shape/rule_registry.h"
#include "shape/window_attributes.h"

namespace memopt::shape {
namespace {

/// Output spatial dims of a convolution or pooling window over in[2:].
Shape WindowedSpatial(InferContext& ctx, const Shape& in, const std::vector<SymExpr>& kernel, bool ceil_mode) {
  const Node& node = ctx.node();
  const size_t n = kernel.size();
  std::vector<int64_t> strides = node.GetInts("strides");
  std::vector<int64_t> dilations = node.GetInts("dilations");
  std::vector<int64_t> pads = node.GetInts("pads");
  strides.resize(n, 1);
  dilations.resize(n, 1);
  pads.resize(2 * n, 0);
  const std::string auto_pad = node.GetString("auto_pad", "NOTSET");
  Shape out;
  for (size_t i = 0; i < n; ++i) {
    const SymExpr& d = in[2 + i];
    const SymExpr s(strides[i] > 0 ? strides[i] : 1);
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      out.push_back(SymExpr::CeilDiv(d, s));
      continue;
    }
    const bool valid = auto_pad == "VALID";
    const SymExpr padded = valid ? d : d + SymExpr(pads[i]) + SymExpr(pads[i + n]);
    const SymExpr span = SymExpr(dilations[i]) * (kernel[i] - SymExpr(1)) + SymExpr(1);
    const SymExpr room = padded - span;
    SymExpr o = (ceil_mode ? SymExpr::CeilDiv(room, s) : SymExpr::FloorDiv(room, s)) + SymExpr(1);
    // With ceil_mode, a last window that would start in the end padding is dropped.
    auto oc = o.AsInt();
    auto dc = d.AsInt();
    if (ceil_mode && oc.has_value() && dc.has_value() && (*oc - 1) * strides[i] >= *dc + pads[i]) o = SymExpr(*oc - 1);
    out.push_back(o);
  }
  return out;
}

std::vector<SymExpr> KernelDims(const InferContext& ctx, const Shape* weight, size_t spatial) {
  std::vector<SymExpr> kernel;
  for (int64_t k : ctx.node().GetInts("kernel_shape")) kernel.emplace_back(k);
  if (kernel.empty() && weight != nullptr && weight->size() == spatial + 2) {
    kernel.assign(weight->begin() + 2, weight->end());
  }
  return kernel;
}

/// The window attributes against the rank of input `x_in` (window_attributes.h).
Status CheckWindow(InferContext& ctx, size_t x_in) {
  const Shape* x = ctx.InputShape(x_in);
  const int64_t spatial = x != nullptr && x->size() >= 2 ? static_cast<int64_t>(x->size()) - 2 : -1;
  Status s = CheckWindowAttributes(ctx.node(), spatial);
  return s.ok() ? s : ctx.Error(s.message());
}

/// Conv with X = input x_in and W = input w_in (QLinearConv has them at 0 and 3).
Status ConvCore(InferContext& ctx, size_t x_in, size_t w_in, DataType dtype) {
  MEMOPT_RETURN_IF_ERROR(CheckWindow(ctx, x_in));
  const Shape* x = ctx.InputShape(x_in);
  const Shape* w = ctx.InputShape(w_in);
  if (x == nullptr || x->size() < 3) {
    ctx.SetOutput(0, dtype, std::nullopt);
    return Status::Ok();
  }
  const size_t spatial = x->size() - 2;
  std::vector<SymExpr> kernel = KernelDims(ctx, w, spatial);
  Shape out{(*x)[0], w != nullptr && !w->empty() ? (*w)[0] : ctx.FreshDim(0, 1, "Conv weight of unknown shape")};
  if (kernel.size() != spatial) {
    for (size_t i = 0; i < spatial; ++i) out.push_back(ctx.FreshDim(0, 2 + i, "Conv kernel shape unknown"));
  } else {
    Shape sp = WindowedSpatial(ctx, *x, kernel, false);
    out.insert(out.end(), sp.begin(), sp.end());
  }
  ctx.SetOutput(0, dtype, std::move(out));
  return Status::Ok();
}

Status ConvRule(InferContext& ctx) { return ConvCore(ctx, 0, 1, ctx.InputType(0)); }

Status ConvIntegerRule(InferContext& ctx) { return ConvCore(ctx, 0, 1, DataType::kInt32); }

Status QLinearConvRule(InferContext& ctx) {
  return ConvCore(ctx, 0, 3, ctx.InputType(7) != DataType::kUndefined ? ctx.InputType(7) : ctx.InputType(0));
}

Status ConvTransposeRule(InferContext& ctx) {
  MEMOPT_RETURN_IF_ERROR(CheckWindow(ctx, 0));
  const Shape* x = ctx.InputShape(0);
  const Shape* w = ctx.InputShape(1);
  const DataType dtype = ctx.InputType(0);
  if (x == nullptr || x->size() < 3) {
    ctx.SetOutput(0, dtype, std::nullopt);
    return Status::Ok();
  }
  const Node& node = ctx.node();
  const size_t n = x->size() - 2;
  const SymExpr group(node.GetInt("group", 1));
  Shape out{(*x)[0], w != nullptr && w->size() >= 2 ? (*w)[1] * group : ctx.FreshDim(0, 1, "ConvTranspose weight of unknown shape")};
  std::vector<int64_t> output_shape = node.GetInts("output_shape");
  if (!output_shape.empty()) {
    for (size_t i = 0; i < n; ++i) {
      const size_t from = output_shape.size() == n ? i : i + 2;
      out.push_back(from < output_shape.size() ? SymExpr(output_shape[from]) : ctx.FreshDim(0, 2 + i, "bad output_shape"));
    }
    ctx.SetOutput(0, dtype, std::move(out));
    return Status::Ok();
  }
  std::vector<SymExpr> kernel = KernelDims(ctx, w, n);
  std::vector<int64_t> strides = node.GetInts("strides");
  std::vector<int64_t> dilations = node.GetInts("dilations");
  std::vector<int64_t> pads = node.GetInts("pads");
  std::vector<int64_t> out_pad = node.GetInts("output_padding");
  strides.resize(n, 1);
  dilations.resize(n, 1);
  pads.resize(2 * n, 0);
  out_pad.resize(n, 0);
  const std::string auto_pad = node.GetString("auto_pad", "NOTSET");
  for (size_t i = 0; i < n; ++i) {
    const SymExpr& d = (*x)[2 + i];
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      out.push_back(d * SymExpr(strides[i]));
    } else if (kernel.size() != n) {
      out.push_back(ctx.FreshDim(0, 2 + i, "ConvTranspose kernel shape unknown"));
    } else {
      const bool valid = auto_pad == "VALID";
      out.push_back(SymExpr(strides[i]) * (d - SymExpr(1)) + SymExpr(out_pad[i]) +
                    SymExpr(dilations[i]) * (kernel[i] - SymExpr(1)) + SymExpr(1) -
                    (valid ? SymExpr(0) : SymExpr(pads[i]) + SymExpr(pads[i + n])));
    }
  }
  ctx.SetOutput(0, dtype, std::move(out));
  return Status::Ok();
}

/// MaxPool / AveragePool / LpPool (+ MaxPool Indices int64).
Status PoolRule(InferContext& ctx) {
  MEMOPT_RETURN_IF_ERROR(CheckWindow(ctx, 0));
  const Shape* x = ctx.InputShape(0);
  const DataType dtype = ctx.InputType(0);
  std::optional<Shape> out;
  if (x != nullptr && x->size() >= 3) {
    std::vector<SymExpr> kernel = KernelDims(ctx, nullptr, x->size() - 2);
    Shape s{(*x)[0], (*x)[1]};
    if (kernel.size() != x->size() - 2) {
      for (size_t i = 2; i < x->size(); ++i) s.push_back(ctx.FreshDim(0, i, "pool kernel_shape missing"));
    } else {
      Shape sp = WindowedSpatial(ctx, *x, kernel, ctx.node().GetInt("ceil_mode", 0) != 0);
      s.insert(s.end(), sp.begin(), sp.end());
    }
    out = std::move(s);
  }
  ctx.SetOutput(0, dtype, out);
  if (ctx.HasOutput(1)) ctx.SetOutput(1, DataType::kInt64, out);
  return Status::Ok();
}

Status GlobalPoolRule(InferContext& ctx) {
  const Shape* x = ctx.InputShape(0);
  std::optional<Shape> out;
  if (x != nullptr && x->size() >= 2) {
    Shape s{(*x)[0], (*x)[1]};
    s.resize(x->size(), SymExpr(1));
    out = std::move(s);
  }
  ctx.SetOutput(0, ctx.InputType(0), std::move(out));
  return Status::Ok();
}

}  // namespace
}  // namespace memopt::shape

MEMOPT_OPS(conv, conv_shape) {
  using namespace memopt::shape;
  RuleRegistry r(ops);
  r.Add("", "Conv", ConvRule);
  r.Add("", "ConvInteger", ConvIntegerRule);
  r.Add("", "QLinearConv", QLinearConvRule);
  r.Add("", "ConvTranspose", ConvTransposeRule);
  for (const char* op : {"MaxPool", "AveragePool", "LpPool"}) r.Add("", op, PoolRule);
  for (const char* op : {"GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool"}) r.Add("", op, GlobalPoolRule);
}
