// Reductions: Reduce* (axes attribute before opset 13/18, axes input after; keepdims,
// noop_with_empty_axes), ms ReduceSumTraining (axes input), ArgMax/ArgMin.
#include "ir/op_registry.h"
#include "shape/rule_registry.h"

namespace memopt::shape {

namespace {

Status ReduceRule(InferContext& ctx) {
  const Shape* in = ctx.InputShape(0);
  const DataType dtype = ctx.InputType(0);
  if (in == nullptr) {
    ctx.SetOutput(0, dtype, std::nullopt);
    return Status::Ok();
  }
  const auto rank = static_cast<int64_t>(in->size());
  const bool keepdims = ctx.node().GetInt("keepdims", 1) != 0;
  const bool noop_empty = ctx.node().GetInt("noop_with_empty_axes", 0) != 0;
  IntListArg axes = ReadIntList(ctx, "axes", 1);
  if (axes.present && !axes.values.has_value() && axes.length != std::optional<int64_t>(0)) {
    if (keepdims) {
      Shape out = *in;
      for (size_t k = 0; k < out.size(); ++k) {
        auto v = out[k].AsInt();
        if (!v.has_value() || *v != 1) out[k] = ctx.FreshDim(0, k, "reduction axes not constant");
      }
      ctx.SetOutput(0, dtype, std::move(out));
    } else if (axes.length.has_value() && *axes.length <= rank) {
      ctx.SetOutput(0, dtype, ctx.FreshShape(0, static_cast<size_t>(rank - *axes.length), "reduction axes not constant"));
    } else {
      ctx.SetOutput(0, dtype, std::nullopt);
      ctx.Diagnose(ctx.OutputName(0), "rank unresolved: reduction axes not constant and keepdims=0");
    }
    return Status::Ok();
  }
  std::vector<bool> reduce(in->size(), false);
  const bool empty = !axes.present || axes.values.value_or(std::vector<int64_t>{}).empty();
  if (empty) {
    if (noop_empty) {
      ctx.SetOutput(0, dtype, *in);
      return Status::Ok();
    }
    reduce.assign(in->size(), true);
  } else {
    for (int64_t a : *axes.values) {
      auto axis = NormalizeAxis(a, rank);
      if (!axis.has_value()) {
        return ctx.Error("reduction axis " + std::to_string(a) + " out of range for rank " +
                                            std::to_string(rank));
      }
      reduce[*axis] = true;
    }
  }
  Shape out;
  for (size_t k = 0; k < in->size(); ++k) {
    if (!reduce[k]) {
      out.push_back((*in)[k]);
    } else if (keepdims) {
      out.emplace_back(1);
    }
  }
  ctx.SetOutput(0, dtype, std::move(out));
  return Status::Ok();
}

Status ArgReduceRule(InferContext& ctx) {
  const Shape* in = ctx.InputShape(0);
  if (in == nullptr) {
    ctx.SetOutput(0, DataType::kInt64, std::nullopt);
    return Status::Ok();
  }
  const int64_t raw_axis = ctx.node().GetInt("axis", 0);
  auto axis = NormalizeAxis(raw_axis, static_cast<int64_t>(in->size()));
  if (!axis.has_value()) {
    return ctx.Error("axis " + std::to_string(raw_axis) + " out of range for rank " +
                                        std::to_string(in->size()));
  }
  Shape out = *in;
  if (ctx.node().GetInt("keepdims", 1) != 0) {
    out[*axis] = SymExpr(1);
  } else {
    out.erase(out.begin() + *axis);
  }
  ctx.SetOutput(0, DataType::kInt64, std::move(out));
  return Status::Ok();
}

constexpr const char* kReduceOps[] = {
    "ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
    "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare",
};

}  // namespace

static void RegisterReduceRules(RuleRegistry& r) {
  for (const char* op : kReduceOps) r.Add("", op, ReduceRule);
  r.Add(kMsDomain, "ReduceSumTraining", ReduceRule);
  r.Add("", "ArgMax", ArgReduceRule);
  r.Add("", "ArgMin", ArgReduceRule);
}

}  // namespace memopt::shape

MEMOPT_OPS(reduce, reduce_shape) {
  memopt::shape::RuleRegistry r(ops);
  memopt::shape::RegisterReduceRules(r);
}
