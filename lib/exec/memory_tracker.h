// Live-bytes accounting of one executor run, with exactly the rules of the static peak estimate
// (analysis/peak_estimate.h, docs/scan.md "Peak estimate"):
//   * initializers and graph inputs are live for the whole run;
//   * at each step the node's named outputs are allocated, then the live total is compared with
//     the peak (the first step with the maximum wins), then values whose last consumer is this
//     step and outputs nobody reads are freed;
//   * graph outputs are never freed.
// Sizes are the actual tensor bytes.
#pragma once

#include <cstdint>
#include <vector>

#include "exec/executor.h"
#include "ir/graph.h"

namespace memopt {

class MemoryTracker {
 public:
  /// `position[node]` = step of the node, -1 when not scheduled; `steps` = order length.
  MemoryTracker(const Graph& graph, const std::vector<int32_t>& position, int32_t steps);

  /// An initializer or graph input (live for the whole run).
  void AddAlwaysLive(ValueId value, int64_t bytes);
  /// A node output allocated at `step`.
  void Allocate(ValueId value, int64_t bytes);
  /// The peak check of `step` (after its outputs were allocated).
  void CheckPeak(int32_t step, NodeId node);
  /// Values to free after `step` (last consumer is this step, or unread outputs of this step).
  const std::vector<ValueId>& ReleasesAt(int32_t step) const { return release_at_[step]; }
  void Release(ValueId value);

  /// Peak, peak step/node, names live at the peak (sorted), weights and inputs.
  MemoryStats Stats(const Graph& graph, const std::vector<NodeId>& order) const;

 private:
  std::vector<int32_t> alloc_;    ///< step, kAlways or kNever
  std::vector<int32_t> release_;  ///< step after whose peak check the value is freed; steps = never
  std::vector<int64_t> bytes_;
  std::vector<std::vector<ValueId>> release_at_;
  int32_t steps_ = 0;
  int64_t live_ = 0;
  int64_t always_ = 0;
  int64_t peak_ = 0;
  int32_t peak_position_ = -1;
  NodeId peak_node_ = kNone;
};

}  // namespace memopt
