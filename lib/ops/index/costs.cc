// The cost classes of the index, slice and scatter ops, by op type: one class for every domain's op
// of that name. plan/cost_model.cc counts their work from it.
#include "ir/op_registry.h"

MEMOPT_OPS(index, costs) {
  using memopt::CostKind;
  for (const char* op : {"Slice", "Gather", "GatherElements", "GatherND", "Pad", "ScatterND", "ScatterElements", "OneHot", "Resize", "ResizeGrad"}) {
    ops.SetCostForOpType(op, {CostKind::kMove});
  }
  // Work that depends on the data: one FLOP per output element.
  ops.SetCostForOpType("NonZero", {CostKind::kElementwise, 1});
}
