// Shape rules of BatchNormalization (and ORT's BatchNormInternal), InstanceNormalization and
// GroupNormalization. (The layer normalisations are in layer_norm.cc.)
#include <optional>

#include "ir/op_registry.h"
#include "shape/rule_registry.h"

namespace memopt::shape {
namespace {

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

}  // namespace
}  // namespace memopt::shape

MEMOPT_OPS(norm, norm_shape) {
  using namespace memopt::shape;
  RuleRegistry r(ops);
  r.Add("", "BatchNormalization", BatchNormRule);
  r.Add(kMsDomain, "BatchNormInternal", BatchNormRule);
  r.Add("", "InstanceNormalization", SameAsInput);
  r.Add("", "GroupNormalization", SameAsInput);
}
