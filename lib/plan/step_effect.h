// The effect of one unit of recompute plans, applied alone, on the peak of every step of the
// base execution order, without simulating the whole rewritten graph (docs/plan.md, "Budget
// planner"). Applying plans changes the lifetimes of few values: the entry outputs whose backward
// readers move to the clones (freed earlier), the values the clones read (possibly kept longer)
// and the clone outputs (new). Every other value keeps its interval, and the original nodes keep
// their order, so the change of the live-bytes curve is a sum of a few interval changes, and the
// steps where clones run get their transient peaks computed from the base curve. A unit costs
// O(its clones and their readers, log), not O(graph): the budget planner needs one effect per
// candidate, which made it quadratic in the graph size when each was a full simulation.
//
// The result equals the full simulation (PlanEvaluator::Evaluate with the curve, reduced by
// StepPeaks) minus the base: tested on every candidate of every test graph. Where the local model
// cannot tell the order exactly (a clone group that would interleave with original backward nodes
// scheduled lazily before the same reader), the unit falls back to a full simulation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "plan/plan_evaluator.h"
#include "util/status.h"

namespace memopt {

/// A change of the step peaks over base positions [begin, end).
struct StepRun {
  int32_t begin = 0, end = 0;
  int64_t delta = 0;  ///< bytes
  bool operator==(const StepRun&) const = default;
};

/// A time of a rewritten order: clone slot `slot` of the clones run right before base position
/// `pos`, or the original node at `pos` itself (slot = kNodeSlot). Ordered lexicographically.
struct StepTime {
  static constexpr int32_t kNodeSlot = std::numeric_limits<int32_t>::max();
  int32_t pos = 0;
  int32_t slot = kNodeSlot;
  auto operator<=>(const StepTime&) const = default;
};

class StepEffects {
 public:
  /// One base simulation (or `base`, an evaluation of no plan with the curve) plus O(nodes +
  /// values) tables.
  static Expected<StepEffects> Create(const PlanEvaluator& evaluator, const PlanEvaluation* base = nullptr);

  /// Steps of the base execution order (every scheduled original node).
  size_t num_steps() const { return order_.size(); }
  /// Peak of each step with no plan: live bytes once its outputs are allocated.
  const std::vector<int64_t>& base_peaks() const { return base_peak_; }
  const PlanEvaluation& base() const { return base_; }

  /// Per step of the base order: the highest live total at that step and at the clones run just
  /// before it, from an evaluation with the curve (clones after the last step count nowhere).
  std::vector<int64_t> StepPeaks(const PlanEvaluation& e) const;

  /// StepPeaks of `plans` applied alone minus base_peaks(), as ascending runs of equal nonzero
  /// change. `simulated` (optional) is set when the unit needed a full simulation. `keys`
  /// (optional) receives what the unit's rewrite touches, sorted: its cloned nodes (3 * node),
  /// the activations (values with a producer and a size) its clones read, recompute or its
  /// rewires free (3 * value + 1) and the base
  /// positions its clones run before (3 * position + 2; not known for simulated units). Units
  /// whose keys are disjoint have effects that add up exactly.
  Expected<std::vector<StepRun>> EffectOf(const std::vector<size_t>& plans, bool* simulated = nullptr,
                                          std::vector<int64_t>* keys = nullptr) const;

  /// The same from a full simulation (the reference EffectOf is tested against).
  Expected<std::vector<StepRun>> SimulatedEffectOf(const std::vector<size_t>& plans) const;

 private:
  explicit StepEffects(const PlanEvaluator& evaluator) : ev_(evaluator) {}
  /// YieldOp graphs: where ORT's lazy backward schedule runs each clone (false: not decidable
  /// locally, e.g. a clone only trailing branch nodes read).
  bool PlaceLazily(const RewriteSpec& spec, const std::vector<int32_t>& producer, std::vector<StepTime>& at) const;

  const PlanEvaluator& ev_;
  PlanEvaluation base_;
  std::vector<NodeId> order_;          ///< base execution order
  std::vector<int32_t> position_;      ///< per node id; -1 when not scheduled
  std::vector<int32_t> file_position_; ///< per node id: position in the written base order
  std::vector<int64_t> base_peak_;     ///< per position
  std::vector<int64_t> base_alloc_;    ///< per position: bytes its outputs allocate
  std::vector<int32_t> base_free_;     ///< per value: position after which it is freed (kNever: never)
  std::vector<char> main_;             ///< per node: backward node that depends on the YieldOp
  std::vector<char> branch_;           ///< per node: other backward node (scheduled lazily)
  std::vector<int32_t> owner_;         ///< per branch node: position of the main node it runs before, or -1
  bool yield_style_ = false;
  bool local_ = false;  ///< the local model applies (its base curve matched the simulation's)
};

}  // namespace memopt
