// The cost classes of the Gelu-family ops, by op type: one class for every domain's op of that
// name. plan/cost_model.cc counts their work from it.
#include "ir/op_registry.h"

MEMOPT_OPS(activation, costs) {
  using memopt::CostKind;
  for (const char* op : {"Gelu", "FastGelu", "BiasGelu", "BiasFastGelu", "GeluGrad", "FastGeluGrad", "BiasGeluGrad_dX"}) {
    ops.SetCostForOpType(op, {CostKind::kElementwise, 8});
  }
}
