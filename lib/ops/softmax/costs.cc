// The cost classes of the softmax ops, by op type: one class for every domain's op of that name.
// plan/cost_model.cc counts their work from it.
#include "ir/op_registry.h"

MEMOPT_OPS(softmax, costs) {
  using memopt::CostKind;
  for (const char* op : {"Softmax", "LogSoftmax", "SoftmaxGrad", "SoftmaxGrad_13"}) {
    ops.SetCostForOpType(op, {CostKind::kElementwise, 5});
  }
  ops.SetCostForOpType("BiasSoftmax", {CostKind::kElementwise, 6});
  ops.SetCostForOpType("BiasSoftmaxDropout", {CostKind::kElementwise, 3});
}
