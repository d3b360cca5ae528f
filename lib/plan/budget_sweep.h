// The trade-off between peak memory and added compute (plan --sweep): budget plans for budgets
// from the unoptimized peak down to the lowest peak the candidates reach (every candidate at once,
// or lower: found by bisection on the budgets the integer program meets), evenly spaced, each
// planned by the budget planner (plan/budget_planner.h). Reference points (ORT's levels, per-block
// checkpointing) are computed by the caller and drawn beside the curve (report/sweep_plot.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "plan/budget_planner.h"
#include "plan/plan_evaluator.h"
#include "util/status.h"

namespace memopt {

struct SweepOptions {
  /// Candidates, groups (--target ort) and objective; budget_bytes is set per point.
  BudgetPlanOptions plan;
  /// Budgets, the unoptimized peak and the lowest reachable one included (at least 2); one point
  /// when no plan lowers the peak.
  int points = 10;
};

/// One point of the trade-off: a budget plan, or a reference (label set, budget 0).
struct SweepPoint {
  std::string label;        ///< "budget 85%", "ORT level 1", "per-block checkpointing"
  int64_t budget_bytes = 0;  ///< 0 for references
  bool met = true;
  int64_t peak_bytes = 0;
  double added_seconds = 0;  ///< the cost model's time of the clones
  int64_t added_flops = 0;
  int nodes_added = 0;
  std::string optimality;   ///< "optimal", "gap 3.2%", "no bound" (budget points)
};

struct SweepResult {
  int64_t unoptimized_peak = 0;
  int64_t lowest_peak = 0;  ///< the lowest peak found (every candidate applied, or by bisection)
  int64_t forward_flops = 0;
  std::vector<SweepPoint> points;  ///< budget points, unoptimized peak first
};

Expected<SweepResult> SweepBudgets(const PlanEvaluator& evaluator, const SweepOptions& options);

/// A reference point from an evaluation (ORT level plans, per-block checkpointing).
SweepPoint ReferencePoint(const std::string& label, const PlanEvaluation& e);

}  // namespace memopt
