// The cost classes of the convolution and pooling ops, by op type: one class for every domain's op
// of that name. plan/cost_model.cc counts their work from it.
#include "ir/op_registry.h"

MEMOPT_OPS(conv, costs) {
  using memopt::CostKind;
  ops.SetCostForOpType("Conv", {CostKind::kConv});
  ops.SetCostForOpType("ConvTranspose", {CostKind::kConvTranspose});
  for (const char* op : {"MaxPool", "AveragePool", "LpPool"}) {
    ops.SetCostForOpType(op, {CostKind::kPool});
  }
  // The global pools reduce whole spatial planes.
  for (const char* op : {"GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool"}) {
    ops.SetCostForOpType(op, {CostKind::kReduce});
  }
}
