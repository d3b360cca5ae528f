// The cost classes of the reduction ops, by op type: one class for every domain's op of that name.
// plan/cost_model.cc counts their work from it.
#include "ir/op_registry.h"

MEMOPT_OPS(reduce, costs) {
  using memopt::CostKind;
  for (const char* op : {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare", "ArgMax", "ArgMin", "ReduceSumTraining"}) {
    ops.SetCostForOpType(op, {CostKind::kReduce});
  }
}
