#include "plan/budget_sweep.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include <fmt/format.h>

namespace memopt {

SweepPoint ReferencePoint(const std::string& label, const PlanEvaluation& e) {
  SweepPoint p;
  p.label = label;
  p.peak_bytes = e.peak_bytes;
  p.added_seconds = e.added_seconds;
  p.added_flops = e.added_flops;
  p.nodes_added = e.nodes_added;
  return p;
}

namespace {

/// Up to this many candidates (plans and splits) the lowest peak is also searched for by the
/// greedy search (seconds at most; beyond, the search's quadratic rounds would dominate).
constexpr size_t kSearchedCandidates = 256;

}  // namespace

Expected<SweepResult> SweepBudgets(const PlanEvaluator& evaluator, const SweepOptions& options) {
  if (options.points < 2) return InvalidInput("a sweep needs at least 2 points");
  SweepResult out;
  out.forward_flops = evaluator.forward_flops();
  MEMOPT_ASSIGN_OR_RETURN(PlanEvaluation base, evaluator.Evaluate({}));
  std::vector<size_t> all = options.plan.candidates;
  if (!options.plan.groups.empty()) {
    std::vector<size_t> every(options.plan.groups.size());
    std::iota(every.begin(), every.end(), 0);
    all = UnitPlans(options.plan.groups, every);
  }
  MEMOPT_ASSIGN_OR_RETURN(PlanEvaluation lowest, evaluator.Evaluate(all));
  out.unoptimized_peak = base.peak_bytes;
  out.lowest_peak = std::min(base.peak_bytes, lowest.peak_bytes);
  // With checkpoint plans among the candidates, all of them at once (per-block checkpointing) may
  // go lower than every candidate (PlanForBudget falls back on both).
  {
    const std::vector<size_t> checkpoints = CheckpointCandidates(evaluator.spec_builder(), all);
    if (!checkpoints.empty()) {
      MEMOPT_ASSIGN_OR_RETURN(PlanEvaluation e, evaluator.Evaluate(checkpoints));
      out.lowest_peak = std::min(out.lowest_peak, e.peak_bytes);
    }
  }
  // Every candidate at once is not always the lowest peak (recomputing everything adds transients,
  // e.g. in ConvNets): bisect on budgets the integer program meets, to 0.5% of the peak.
  {
    int64_t lo = evaluator.weights_and_inputs_bytes(), hi = out.lowest_peak;
    for (int i = 0; i < 16 && hi - lo > out.unoptimized_peak / 200; ++i) {
      BudgetPlanOptions probe = options.plan;
      probe.budget_bytes = lo + (hi - lo) / 2;
      probe.greedy_fallback = false;
      MEMOPT_ASSIGN_OR_RETURN(BudgetPlanResult r, PlanForBudget(evaluator, probe));
      if (r.met) {
        hi = r.evaluation.peak_bytes;
      } else {
        lo = probe.budget_bytes;
      }
    }
    // The program's step model can miss plans of interacting units that the greedy search finds
    // (the tiny GPT-2: 770 KiB by bisection, 738 KiB by the search): on graphs small enough for
    // the search, one search at the budget the program could not meet.
    if (all.size() <= kSearchedCandidates && lo < hi) {
      BudgetPlanOptions probe = options.plan;
      probe.budget_bytes = lo;
      MEMOPT_ASSIGN_OR_RETURN(BudgetPlanResult r, PlanForBudget(evaluator, probe));
      hi = std::min(hi, r.evaluation.peak_bytes);
    }
    out.lowest_peak = hi;
  }
  // Nothing to reduce: one point, the unoptimized peak, instead of `points` identical ones.
  const int count = out.lowest_peak < out.unoptimized_peak ? options.points : 1;
  for (int k = 0; k < count; ++k) {
    const double f = count == 1 ? 0.0 : static_cast<double>(k) / (count - 1);
    const int64_t budget =
        out.unoptimized_peak - static_cast<int64_t>(std::llround(f * static_cast<double>(out.unoptimized_peak - out.lowest_peak)));
    BudgetPlanOptions plan = options.plan;
    plan.budget_bytes = budget;
    MEMOPT_ASSIGN_OR_RETURN(BudgetPlanResult r, PlanForBudget(evaluator, plan));
    SweepPoint p = ReferencePoint(fmt::format("budget {:.1f}%", 100.0 * static_cast<double>(budget) /
                                                                     static_cast<double>(out.unoptimized_peak)),
                                  r.evaluation);
    p.budget_bytes = budget;
    p.met = r.met;
    if (QualityOf(r) != PlanQuality::kNoBound) {
      p.optimality = r.optimal ? "optimal" : fmt::format("gap {:.1f}%", 100.0 * r.gap);
    } else {
      p.optimality = k == 0 ? "optimal" : "no bound";
    }
    out.points.push_back(std::move(p));
  }
  return out;
}

}  // namespace memopt
