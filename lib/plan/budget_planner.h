// Chooses which recompute plans (per occurrence, or whole clusters for --target ort) to apply so
// that the simulated peak of the rewritten training step fits a memory budget, at the least added
// compute (docs/plan.md, "Budget planner"). The plan it returns is judged by its real effect: the
// rewrite is scheduled and its liveness simulated (plan/plan_evaluator.h).
//
//   0. the integer program (plan/budget_ilp.h, which also drops units the exact peaks show
//      unneeded); when it finds no plan (or BudgetPlanOptions::integer_program is false), the
//      search below:
//   1. forward greedy: repeatedly add the candidate with the best ratio of over-budget area
//      removed (sum over steps of live bytes above the budget) to compute added, re-simulating
//      after each pick; then drop picks the budget does not need (most expensive first);
//   2. reverse pass: start from every candidate, drop the most expensive ones while the budget
//      holds;
//   3. keep the cheaper of the two, then improve it by swaps (replace a pick by a cheaper
//      candidate, or two picks by one) while the budget holds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/scan.h"
#include "plan/budget_ilp.h"
#include "plan/plan_evaluator.h"
#include "util/status.h"

namespace memopt {

struct BudgetPlanOptions {
  int64_t budget_bytes = 0;
  std::vector<size_t> candidates;  ///< indices into ScanResult::plans
  /// When not empty, the units chosen instead of single candidates: a group is applied whole
  /// (plan --target ort: every occurrence of a cluster id, as ONNX Runtime applies a config
  /// entry). `candidates` is then ignored.
  std::vector<std::vector<size_t>> groups;
  PlanObjective objective = PlanObjective::kTime;
  /// Stop improving after this many evaluations (the result is still valid).
  int max_evaluations = 200000;
  /// Solve the integer program first (plan/budget_ilp.h); the search below runs only when it
  /// finds no plan. False: the search alone (tests compare the two).
  bool integer_program = true;
  /// When the integer program finds no plan, run the greedy search (false: report the budget
  /// not met at once; plan --sweep's search for the lowest peak).
  bool greedy_fallback = true;
  /// Time for the integer program's solves together (BudgetIlpOptions::time_limit_seconds).
  double ilp_time_limit_seconds = 1;
  /// A plan known to meet the budget (plan indices, each among `candidates`): the integer
  /// program's first incumbent (BudgetIlpOptions::start_units).
  std::vector<size_t> start_plans;
};

/// How PlanForBudget found its plan.
enum class PlanMethod {
  kNone,            ///< nothing to plan: the step fits the budget without recompute
  kIntegerProgram,  ///< the integer program (plan/budget_ilp.h)
  kGreedySearch,    ///< the greedy and reverse search, after the program found no plan
};
/// "integer program" or "greedy search" (the report's words); empty for kNone.
std::string_view PlanMethodName(PlanMethod method);

/// What the planner can prove about a result.
enum class PlanQuality {
  kOptimal,    ///< the integer program proved the plan optimal for its step model
  kWithinGap,  ///< the integer program's plan, within BudgetPlanResult::gap of its LP bound
  kNoBound,    ///< no optimality bound (the program gave none, or the search planned)
};

struct BudgetPlanResult {
  bool met = false;
  std::vector<size_t> plans;        ///< chosen plans, ascending; the best peak found when !met
  PlanEvaluation evaluation;        ///< of `plans`
  PlanEvaluation baseline;          ///< no plan applied
  PlanEvaluation all_candidates;    ///< every candidate applied
  int evaluations = 0;
  PlanMethod method = PlanMethod::kNone;
  bool optimal = false;   ///< the integer program proved its plan optimal for its step model
  double gap = 0;         ///< otherwise its relative gap to the LP lower bound (integer program); -1: none
  std::string ilp_note;   ///< why the integer program gave way to the search or to its fallback, if it did
};

/// plan --target ort: the candidates grouped by (cluster id, type), each group every occurrence
/// of that cluster (ScanResult::plans order). A cluster with an occurrence that is not a
/// candidate (the rewrite cannot apply it, or the other type was chosen for the id) is left out:
/// ONNX Runtime would apply all of them.
std::vector<std::vector<size_t>> WholeClusterGroups(const ScanResult& scan, const std::vector<size_t>& candidates);

/// The candidates a budget plan chooses from at `level` (as `scan`'s groups: type 1 at levels 0
/// and 1, types 1 and 2 at level 2): plans the rewrite supports, one type per cluster id (type 1
/// wins), in ScanResult::plans order.
std::vector<size_t> BudgetCandidates(const ScanResult& scan, int level, const RewriteSpecBuilder& builder);

/// The checkpoint plans among `candidates` (plan/layer_checkpoint.h; splits are not), in order.
std::vector<size_t> CheckpointCandidates(const RewriteSpecBuilder& builder, const std::vector<size_t>& candidates);

/// `candidates` and every variant of them (RewriteSpecBuilder: a split, one more clone group
/// starting at each backward reader after the first; and, when they number at most 64, a keep at
/// each reader and private chains, where chains among the candidates make them change anything),
/// ascending: the candidates of memopt's own rewrite model.
std::vector<size_t> WithSplits(const RewriteSpecBuilder& builder, const std::vector<size_t>& candidates);

Expected<BudgetPlanResult> PlanForBudget(const PlanEvaluator& evaluator, const BudgetPlanOptions& options);

PlanQuality QualityOf(const BudgetPlanResult& result);
/// The quality in the report's words: "optimal for the step model (within 0.5%)", "within 3.2% of
/// the step model's LP bound (time limit)", "no optimality bound (<why>)".
std::string DescribeQuality(const BudgetPlanResult& result);

}  // namespace memopt
