// The cost classes of the matrix-product ops, by op type: one class for every domain's op of that
// name. plan/cost_model.cc counts their work from it.
#include "ir/op_registry.h"

MEMOPT_OPS(matmul, costs) {
  using memopt::CostKind;
  for (const char* op : {"MatMul", "FusedMatMul", "MatMulInteger", "TransposeMatMul"}) {
    ops.SetCostForOpType(op, {CostKind::kMatMul});
  }
  ops.SetCostForOpType("Gemm", {CostKind::kGemm});
  ops.SetCostForOpType("Einsum", {CostKind::kEinsum});
}
