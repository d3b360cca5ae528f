// The cost classes of the training-only ops, by op type: one class for every domain's op of that
// name. plan/cost_model.cc counts their work from it.
#include "ir/op_registry.h"

MEMOPT_OPS(training, costs) {
  using memopt::CostKind;
  for (const char* op : {"MemcpyFromHost", "MemcpyToHost", "FlattenAndUnpad", "PadAndUnflatten"}) {
    ops.SetCostForOpType(op, {CostKind::kMove});
  }
  // Work that depends on Python code: one FLOP per output element.
  ops.SetCostForOpType("PythonOp", {CostKind::kElementwise, 1});
}
