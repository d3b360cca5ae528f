// Shape rule of GridSample (the input sampled at the grid's points).
#include <optional>

#include "ir/op_registry.h"
#include "shape/rule_registry.h"

namespace memopt::shape {
namespace {

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

}  // namespace
}  // namespace memopt::shape

MEMOPT_OPS(index, grid_sample_shape) {
  using namespace memopt::shape;
  RuleRegistry r(ops);
  r.Add("", "GridSample", GridSampleRule);
}
