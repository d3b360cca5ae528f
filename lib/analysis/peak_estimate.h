// Static peak-memory estimate along an execution order (docs/scan.md, "Peak estimate"; the CPU
// executor must reproduce these rules exactly):
//   * initializers and graph inputs are live for the whole step (weights_and_inputs_bytes);
//   * at each step the node's outputs are allocated (every named output, unused ones too), then
//     the live total is compared with the peak (so the peak holds the node's inputs that are
//     still live plus its new outputs), then the values whose last consumer is this step are
//     freed, and outputs nobody consumes are freed at the step that produced them;
//   * graph outputs stay live until the end;
//   * values with unknown shape or type count 0 bytes (unsized_values).
// Each value's bytes are evaluated once to int64 at the bound dims; unbound dims are set to
// 1024 to locate the peak (sized = false, the names are in unbound_dims). peak_expr and
// stashed_expr_at_peak are the symbolic sums of what is live at that step.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/scan.h"
#include "ir/graph.h"
#include "sym/sym_expr.h"

namespace memopt {

/// When each value is allocated and freed along an order and what it counts, by the rules above
/// (shared by EstimatePeak and the memory timeline, which must agree step for step).
struct ValueLiveRanges {
  static constexpr int32_t kNever = -2;   ///< not tracked: produced by no node of the order
  static constexpr int32_t kAlways = -1;  ///< initializer or graph input: live for the whole step
  std::vector<int32_t> alloc;             ///< step that allocates the value, or kNever / kAlways
  std::vector<int32_t> release;           ///< step after whose peak check it is freed (steps: never)
  /// Symbolic size of tracked values that are counted; empty for unsized ones.
  std::vector<std::optional<SymExpr>> bytes;
  /// Bytes at the dims (unbound ones at 1024); 0 for unsized values. A size that does not
  /// evaluate to int64, or that a sum over all values could overflow (> INT64_MAX / values), is
  /// unsized, so every running total stays in range.
  std::vector<int64_t> size;
  std::vector<std::string> unbound_dims;  ///< sorted
  int unsized_values = 0;                 ///< tracked values counted as 0 bytes
  std::vector<ValueId> unsized;           ///< those values, by id
};

ValueLiveRanges ComputeValueLiveRanges(const Graph& graph, const ExecutionOrder& order, const DimBindings& dims);

/// `is_stashed_value`: per value id, 1 for stashed activations (StashedCandidates).
PeakEstimate EstimatePeak(const Graph& graph, const ExecutionOrder& order, const std::vector<char>& is_stashed_value,
                          const DimBindings& dims);

}  // namespace memopt
