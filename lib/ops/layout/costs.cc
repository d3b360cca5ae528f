// The cost classes of the shape and layout ops, by op type: one class for every domain's op of that
// name. plan/cost_model.cc counts their work from it.
#include "ir/op_registry.h"

MEMOPT_OPS(layout, costs) {
  using memopt::CostKind;
  for (const char* op : {"Transpose", "Expand", "Tile", "Concat", "ConcatTraining", "Split", "SplitTraining", "DepthToSpace", "SpaceToDepth"}) {
    ops.SetCostForOpType(op, {CostKind::kMove});
  }
  // Views: no bytes move.
  for (const char* op : {"Reshape", "Squeeze", "Unsqueeze", "Flatten", "Identity", "Shape", "Size"}) {
    ops.SetCostForOpType(op, {CostKind::kView});
  }
}
