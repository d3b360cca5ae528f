// The cost classes of the normalization (but the LayerNorm family, in layer_norm.cc) ops, by op
// type: one class for every domain's op of that name. plan/cost_model.cc counts their work from it.
#include "ir/op_registry.h"

MEMOPT_OPS(norm, costs) {
  using memopt::CostKind;
  for (const char* op : {"GroupNorm", "InstanceNormalization", "BatchNormalization"}) {
    ops.SetCostForOpType(op, {CostKind::kElementwise, 8});
  }
}
