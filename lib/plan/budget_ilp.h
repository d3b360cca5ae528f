// The budget problem as a 0-1 integer program (docs/plan.md, "Budget planner"):
//
//   minimise   sum_u cost_u x_u                       x_u in {0, 1}: apply unit u or not
//   subject to R_0(n) + sum_u D_u(n) x_u <= budget    for every step n of the base order
//
// A unit is one recompute plan, or a whole cluster (plan --target ort). R_S(n) is the live-bytes
// peak of step n (with the clone steps placed just before it) when the units S are applied;
// D_u = R_{u} - R_0 is unit u's effect alone, computed locally from the values its rewrite touches
// (plan/step_effect.h), so the program is exact for units that do not interact. It is solved with
// GLPK: the LP relaxation, a rounded and a dived LP solution as the first plan (the answer when
// within 0.5% of the LP bound), else branch and cut from it, with row generation (only steps that
// can exceed the budget; the most violated ones are added until none is). The solution is then
// simulated exactly; where effects interact and the true peak is higher, the rows there are
// tightened by the difference and the program is solved again; units the exact peaks show
// unneeded are dropped.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "plan/plan_evaluator.h"
#include "util/status.h"

namespace memopt {

/// The program's plan is called optimal when proven within this fraction of the optimum.
constexpr double kMipGap = 0.005;

struct BudgetIlpOptions {
  int64_t budget_bytes = 0;
  /// The units to choose from: each a set of plan indices (ScanResult::plans), applied whole.
  std::vector<std::vector<size_t>> units;
  PlanObjective objective = PlanObjective::kTime;
  /// Time for all the solves together (effects and simulations not counted); past it the best
  /// solution found so far is used and its gap to the LP bound is reported.
  double time_limit_seconds = 1;
  /// Exact-check-and-tighten rounds before giving up (the caller falls back to a search).
  int max_repairs = 8;
  /// Evaluations with the curve (PlanEvaluator::Evaluate(..., true)) of no unit and of every unit,
  /// when the caller has them; evaluated here when null.
  const PlanEvaluation* base = nullptr;
  const PlanEvaluation* every_unit = nullptr;
  /// A known plan (indices into `units`), e.g. the plan of a smaller program over some of these
  /// units: it starts the branch and bound when the step model says it fits and no other
  /// incumbent is cheaper, so that the program never returns a worse plan than it.
  std::vector<size_t> start_units;
};

struct BudgetIlpResult {
  bool feasible = false;        ///< a set of units whose exact peak fits the budget was found
  std::vector<size_t> units;    ///< chosen units (indices into BudgetIlpOptions::units), ascending
  PlanEvaluation evaluation;    ///< exact simulation of the chosen units
  bool optimal = false;         ///< proven within 0.5% of the program's optimum (the additive step model)
  double gap = 0;               ///< (cost - lower bound) / cost; 0 when optimal; -1: no bound (see note)
  /// When the program itself failed and its fallback (every unit, pruned by simulation) was used:
  /// why; the plan then has no optimality bound.
  std::string note;
  /// The step model predicted the chosen plan's exact step peaks (no interaction among its units):
  /// then no chosen unit can be dropped without breaking the budget in the model either.
  bool model_exact = false;
  int evaluations = 0;          ///< exact simulations run
  int solves = 0;               ///< integer programs solved
  std::string why_not;          ///< when !feasible: the reason (the caller falls back)
};

/// The plans `chosen` units stand for: the union of their plan sets, ascending.
std::vector<size_t> UnitPlans(const std::vector<std::vector<size_t>>& units, const std::vector<size_t>& chosen);

Expected<BudgetIlpResult> SolveBudgetIlp(const PlanEvaluator& evaluator, const BudgetIlpOptions& options);

}  // namespace memopt
