// What recomputing a node costs: FLOPs and bytes moved, from the inferred shapes at --dims
// (unbound dims at 1024), and an estimated time on a reference accelerator that the budget
// planner minimises. The table is documented in docs/plan.md ("Cost model").
//
//   FLOPs  MatMul / FusedMatMul / Gemm / MatMulInteger: 2 * M * N * K (Gemm: + M * N with C);
//          Conv: 2 * output elements * (C_in / group) * kernel elements; ConvTranspose likewise
//          from the input; MaxPool/AveragePool/LpPool: output elements * window elements;
//          reductions and global pooling: input elements; elementwise and normalisation ops: output
//          elements x a per-op factor (1 for arithmetic, 4 for exp/log/tanh/erf/sigmoid,
//          5 for Softmax, 8 for Gelu variants and LayerNorm variants, 3 for Dropout variants);
//          data movement (Reshape, Transpose, Cast, Expand, Tile, Concat, Slice, Gather, ...): 0;
//          any other op: 1 per output element.
//   bytes  every input and output tensor once (read + write); views (Reshape, Squeeze,
//          Unsqueeze, Flatten, Identity) and metadata ops (Shape, Size): 0.
//   time   max(matmul FLOPs / matmul rate + other FLOPs / other rate, bytes / bandwidth): a roofline
//          of an A100/H100-class GPU (CostModel's defaults). Only ratios matter to the planner.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "ir/graph.h"
#include "sym/sym_expr.h"

namespace memopt {

struct NodeCost {
  int64_t flops = 0;
  int64_t bytes = 0;        ///< bytes read + written
  bool matmul_class = false;  ///< FLOPs run at matmul rate
  double seconds = 0;       ///< roofline time (CostModel)
};

struct CostModel {
  double matmul_flops_per_second = 200e12;
  double other_flops_per_second = 20e12;
  double bytes_per_second = 2e12;
};

/// Cost of one node at `dims` (unbound dims count as 1024; unknown shapes count 0).
NodeCost EstimateNodeCost(const Graph& graph, const Node& node, const DimBindings& dims,
                          const CostModel& model = {});

/// The model's rates in words: "200 TFLOP/s matmul, 20 TFLOP/s other, 2 TB/s".
std::string DescribeRoofline(const CostModel& model);

/// True when the op registry gives the op a cost class (any other op is costed as 1 FLOP per output
/// element).
bool CostModelKnows(std::string_view op_type);

/// Elements of a value at `dims` (unbound dims at 1024); nullopt when the shape is unknown.
std::optional<int64_t> ElementsAt(const Graph& graph, ValueId value, const DimBindings& dims);

}  // namespace memopt
