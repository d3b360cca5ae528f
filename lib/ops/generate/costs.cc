// The cost classes of the generator ops, by op type: one class for every domain's op of that name.
// plan/cost_model.cc counts their work from it.
#include "ir/op_registry.h"

MEMOPT_OPS(generate, costs) {
  using memopt::CostKind;
  for (const char* op : {"Constant", "ConstantOfShape", "Range", "EyeLike"}) {
    ops.SetCostForOpType(op, {CostKind::kMove});
  }
}
