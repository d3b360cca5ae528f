// Neural-network ops: Conv, ConvTranspose, pooling, normalizations (BatchNormalization,
// Instance/GroupNormalization; the layer normalisations are in ops/norm/layer_norm.cc), Einsum,
// and the standard losses.
//
// Spatial output size with pads p_b/p_e, stride s, dilation d, kernel k:
//   floor((D + p_b + p_e - (d*(k-1) + 1)) / s) + 1   (ceil for pooling with ceil_mode=1);
//   auto_pad SAME_*: ceil(D / s); VALID: pads 0.
#include <algorithm>
#include <map>

#include "ir/op_registry.h"
#include "shape/broadcast.h"
#include "shape/rule_registry.h"
#include "shape/window_attributes.h"

namespace memopt::shape {

namespace {

std::optional<Shape> OptShape(const Shape* s) { return s ? std::optional<Shape>(*s) : std::nullopt; }

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

/// BatchNormalization: Y = X; every statistics output is [C].
Status BatchNormRule(InferContext& ctx) {
  ctx.CopyInputToOutput(0, 0);
  const Shape* x = ctx.InputShape(0);
  const DataType stat_type = ctx.InputType(3) != DataType::kUndefined ? ctx.InputType(3) : ctx.InputType(0);
  for (size_t o = 1; o < ctx.NumOutputs(); ++o) {
    std::optional<Shape> s;
    if (x != nullptr && x->size() >= 2) {
      s = Shape{(*x)[1]};
    } else if (const Shape* scale = ctx.InputShape(1); scale != nullptr && scale->size() == 1) {
      s = *scale;
    }
    ctx.SetOutput(o, stat_type, std::move(s));
  }
  return Status::Ok();
}

Status SameAsInput(InferContext& ctx) {
  ctx.CopyInputToOutput(0, 0);
  return Status::Ok();
}

/// Einsum: letters take their dims from the inputs (a 1 yields to a larger dim), "..." dims are
/// broadcast; implicit output = "..." + letters seen once, sorted.
Status EinsumRule(InferContext& ctx) {
  std::string eq;
  for (char c : ctx.node().GetString("equation", "")) {
    if (c != ' ') eq += c;
  }
  const DataType dtype = ctx.InputType(0);
  const auto arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  std::vector<std::string> terms;
  size_t pos = 0;
  while (true) {
    const auto comma = lhs.find(',', pos);
    terms.push_back(lhs.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos));
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  if (terms.size() != ctx.NumInputs()) {
    ctx.Diagnose(ctx.OutputName(0), "Einsum equation '" + eq + "' does not match the number of inputs");
    ctx.SetOutput(0, dtype, std::nullopt);
    return Status::Ok();
  }
  std::map<char, SymExpr> dims;
  std::map<char, int> count;
  std::vector<Shape> ellipsis_parts;
  for (size_t i = 0; i < terms.size(); ++i) {
    const Shape* s = ctx.InputShape(i);
    if (s == nullptr) {
      ctx.SetOutput(0, dtype, std::nullopt);
      return Status::Ok();
    }
    const std::string& t = terms[i];
    const auto dots = t.find("...");
    const size_t letters = t.size() - (dots == std::string::npos ? 0 : 3);
    if (letters > s->size() || (dots == std::string::npos && letters != s->size())) {
      ctx.Diagnose(ctx.OutputName(0), "Einsum term '" + t + "' does not match input rank " + std::to_string(s->size()));
      ctx.SetOutput(0, dtype, std::nullopt);
      return Status::Ok();
    }
    const size_t ell = s->size() - letters;
    size_t dim = 0;
    for (size_t c = 0; c < t.size(); ++c) {
      if (dots != std::string::npos && c == dots) {
        ellipsis_parts.emplace_back(s->begin() + dim, s->begin() + dim + ell);
        dim += ell;
        c += 2;
        continue;
      }
      const char letter = t[c];
      ++count[letter];
      const SymExpr& d = (*s)[dim++];
      auto it = dims.find(letter);
      if (it == dims.end()) {
        dims.emplace(letter, d);
      } else {
        bool conflict = false;
        it->second = BroadcastDim(it->second, d, &ctx.broadcast_notes(), &conflict);
      }
    }
  }
  std::vector<const Shape*> parts;
  for (const Shape& p : ellipsis_parts) parts.push_back(&p);
  const Shape ellipsis = parts.empty() ? Shape{} : BroadcastShapes(parts, &ctx.broadcast_notes()).shape;
  Shape out;
  if (arrow == std::string::npos) {
    out = ellipsis;
    for (const auto& [letter, n] : count) {
      if (n == 1) out.push_back(dims[letter]);
    }
  } else {
    const std::string rhs = eq.substr(arrow + 2);
    for (size_t c = 0; c < rhs.size(); ++c) {
      if (rhs.compare(c, 3, "...") == 0) {
        out.insert(out.end(), ellipsis.begin(), ellipsis.end());
        c += 2;
      } else if (auto it = dims.find(rhs[c]); it != dims.end()) {
        out.push_back(it->second);
      } else {
        ctx.Diagnose(ctx.OutputName(0), std::string("Einsum output letter '") + rhs[c] + "' not in any input");
        ctx.SetOutput(0, dtype, std::nullopt);
        return Status::Ok();
      }
    }
  }
  ctx.SetOutput(0, dtype, std::move(out));
  return Status::Ok();
}

/// SoftmaxCrossEntropyLoss / NegativeLogLikelihoodLoss: loss = labels' shape for reduction
/// "none", else a scalar; log_prob (SCE output 1) = scores' shape.
Status LossRule(InferContext& ctx) {
  const DataType dtype = ctx.InputType(0);
  const bool none = ctx.node().GetString("reduction", "mean") == "none";
  ctx.SetOutput(0, dtype, none ? OptShape(ctx.InputShape(1)) : std::optional<Shape>(Shape{}));
  if (ctx.HasOutput(1)) ctx.SetOutput(1, dtype, OptShape(ctx.InputShape(0)));
  return Status::Ok();
}

/// RNN / GRU / LSTM: Y [seq, dirs, batch, hidden] and Y_h, Y_c [dirs, batch, hidden]
/// (layout=1: batch first).
Status RecurrentRule(InferContext& ctx) {
  const Shape* x = ctx.InputShape(0);
  const DataType dtype = ctx.InputType(0);
  const bool batch_first = ctx.node().GetInt("layout", 0) != 0;
  const SymExpr dirs(ctx.node().GetString("direction", "forward") == "bidirectional" ? 2 : 1);
  std::optional<SymExpr> hidden;
  if (ctx.node().HasAttr("hidden_size")) {
    hidden = SymExpr(ctx.node().GetInt("hidden_size", 0));
  } else if (const Shape* r = ctx.InputShape(2); r != nullptr && r->size() == 3) {
    hidden = (*r)[2];
  }
  if (x == nullptr || x->size() != 3 || !hidden.has_value()) {
    for (size_t o = 0; o < ctx.NumOutputs(); ++o) ctx.SetOutput(o, dtype, std::nullopt);
    return Status::Ok();
  }
  const SymExpr seq = (*x)[batch_first ? 1 : 0];
  const SymExpr batch = (*x)[batch_first ? 0 : 1];
  ctx.SetOutput(0, dtype, batch_first ? Shape{batch, seq, dirs, *hidden} : Shape{seq, dirs, batch, *hidden});
  for (size_t o = 1; o < ctx.NumOutputs(); ++o) {
    ctx.SetOutput(o, dtype, batch_first ? Shape{batch, dirs, *hidden} : Shape{dirs, batch, *hidden});
  }
  return Status::Ok();
}

/// GridSample: [N, C] + the grid's spatial dims.
Status GridSampleRule(InferContext& ctx) {
  const Shape* x = ctx.InputShape(0);
  const Shape* grid = ctx.InputShape(1);
  std::optional<Shape> out;
  if (x != nullptr && grid != nullptr && x->size() >= 2 && grid->size() == x->size()) {
    Shape s{(*x)[0], (*x)[1]};
    s.insert(s.end(), grid->begin() + 1, grid->end() - 1);
    out = std::move(s);
  }
  ctx.SetOutput(0, ctx.InputType(0), std::move(out));
  return Status::Ok();
}

/// Det: batch dims of [*, M, M].
Status DetRule(InferContext& ctx) {
  const Shape* x = ctx.InputShape(0);
  ctx.SetOutput(0, ctx.InputType(0), x != nullptr && x->size() >= 2 ? std::optional<Shape>(Shape(x->begin(), x->end() - 2))
                                                                     : std::nullopt);
  return Status::Ok();
}

}  // namespace

static void RegisterNnRules(RuleRegistry& r) {
  r.Add("", "ConvInteger", ConvIntegerRule);
  r.Add("", "QLinearConv", QLinearConvRule);
  for (const char* op : {"RNN", "GRU", "LSTM"}) r.Add("", op, RecurrentRule);
  r.Add("", "GridSample", GridSampleRule);
  r.Add("", "Det", DetRule);
  r.Add("", "RotaryEmbedding", SameAsInput);
  r.Add(kMsDomain, "RotaryEmbedding", SameAsInput);
  r.Add("", "Conv", ConvRule);
  r.Add("", "ConvTranspose", ConvTransposeRule);
  for (const char* op : {"MaxPool", "AveragePool", "LpPool"}) r.Add("", op, PoolRule);
  for (const char* op : {"GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool"}) r.Add("", op, GlobalPoolRule);
  r.Add("", "BatchNormalization", BatchNormRule);
  r.Add(kMsDomain, "BatchNormInternal", BatchNormRule);
  r.Add("", "InstanceNormalization", SameAsInput);
  r.Add("", "GroupNormalization", SameAsInput);
  r.Add("", "Einsum", EinsumRule);
  r.Add("", "SoftmaxCrossEntropyLoss", LossRule);
  r.Add("", "NegativeLogLikelihoodLoss", LossRule);
}

}  // namespace memopt::shape

MEMOPT_OPS(conv, nn_shape) {
  memopt::shape::RuleRegistry r(ops);
  memopt::shape::RegisterNnRules(r);
}
