// Live bytes over the execution order of one training step, split by kind, for the memory
// timeline (`scan --timeline`, `plan --timeline`). The series is recomputed from the graph, the
// order and the stashed set with exactly the liveness rules of analysis/peak_estimate.h:
//   * initializers and graph inputs are live for the whole step;
//   * at step i the node's outputs are allocated (every named output), then the live total is
//     read (the "peak check": the value plotted, whose maximum is PeakEstimate::peak_bytes), then
//     values whose last consumer is step i are freed, and outputs nobody reads are freed at the
//     step that produced them (the total after the frees is PeakEstimate::live_after_step);
//   * graph outputs stay live until the end; unknown sizes count 0 bytes; unbound dims are 1024.
// Kinds (a value has exactly one):
//   weights_and_inputs  initializers and graph inputs;
//   stashed             forward outputs some backward node reads (the analysis's stashed set);
//   gradients           outputs of backward nodes that are graph outputs or are named "*_grad",
//                       and the YieldOp's outputs named so (the incoming output gradients);
//   transient           every other activation.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "analysis/scan.h"
#include "ir/graph.h"
#include "sym/sym_expr.h"

namespace memopt {

enum class LiveKind : int8_t { kWeightsAndInputs = 0, kStashed = 1, kTransient = 2, kGradients = 3 };
constexpr int kNumLiveKinds = 4;

/// "weights_and_inputs", "stashed", "transient", "gradients" (JSON keys, CSS classes).
const char* LiveKindKey(LiveKind kind);
/// "weights and inputs", "stashed activations", "transient activations", "gradients".
const char* LiveKindLabel(LiveKind kind);

/// One tensor live at the peak step.
struct TimelineTensor {
  ValueId value = kNone;
  LiveKind kind = LiveKind::kTransient;
  int64_t bytes = 0;
};

struct TimelineData {
  const Graph* graph = nullptr;  ///< not owned; names for labels and hover details
  std::vector<NodeId> order;     ///< the node run at each step
  int32_t last_forward = -1;     ///< steps <= this are forward; -1: no forward/backward split
  /// live[k][i]: bytes of kind k live at step i's peak check.
  std::array<std::vector<int64_t>, kNumLiveKinds> live;
  /// Total live bytes after step i's frees (equals PeakEstimate::live_after_step).
  std::vector<int64_t> live_after;
  int64_t peak_bytes = 0;        ///< max over steps of Total(i) (weights and inputs when empty)
  int32_t peak_position = -1;    ///< first step reaching peak_bytes
  NodeId peak_node = kNone;
  bool sized = true;             ///< false when some dim was unbound (counted as 1024)
  std::vector<std::string> unbound_dims;
  int unsized_values = 0;        ///< values of unknown size, counted as 0 bytes
  /// Per value id: its bytes at the dims (0 when unknown or untracked) and its kind (-1 when no
  /// step allocates it: a value of an unscheduled node or a name nothing defines).
  std::vector<int64_t> value_bytes;
  std::vector<int8_t> value_kind;
  /// Tensors live at the peak step, largest first (ties: value id), at most kMaxPeakTensors.
  std::vector<TimelineTensor> live_at_peak;
  static constexpr size_t kMaxPeakTensors = 12;

  size_t steps() const { return order.size(); }
  int64_t Total(size_t step) const;
};

/// The timeline of `order` over `graph`; `is_stashed_value` is per value id (StashedCandidates).
TimelineData ComputeTimeline(const Graph& graph, const ExecutionOrder& order, const std::vector<char>& is_stashed_value,
                             const DimBindings& dims);

/// The same with the stashed set found from the order (FindStashedCandidates, less the YieldOp's
/// outputs, as Scan's peak estimate does): for a scan result (graph + ScanResult::order) and for a
/// rewritten graph and the order it runs in.
TimelineData ComputeGraphTimeline(const Graph& graph, const ExecutionOrder& order, const DimBindings& dims);

/// Consecutive steps merged into one plotted point.
struct TimelineBucket {
  int32_t first = 0;          ///< first step
  int32_t last = 0;           ///< last step (inclusive)
  int32_t rep = 0;            ///< step with the largest total (first one on ties)
  std::array<int64_t, kNumLiveKinds> at_rep{};  ///< the kinds at `rep` (their sum is max_total)
  int64_t min_total = 0;
  int64_t max_total = 0;
};

/// At most `max_points` buckets of equal width (ceil(steps / max_points) steps; one step per
/// bucket when steps <= max_points). The peak step is always the `rep` of its bucket, so the
/// plotted maximum equals peak_bytes. A step range never spans the forward/backward boundary:
/// the bucket that would contain it is split there (so there may be one bucket more).
std::vector<TimelineBucket> AggregateTimeline(const TimelineData& data, size_t max_points);

}  // namespace memopt
