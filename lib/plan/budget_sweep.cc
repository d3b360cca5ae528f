#include "plan/budget_sweep.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>

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
/// Up to this many, the bisection's probes also count the budgets the greedy search meets (its
/// plans are not monotone in the budget: it may miss a budget and meet a lower one).
constexpr size_t kBisectedBySearch = 96;

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
  out.lowest_peak = base.peak_bytes;
  std::optional<BudgetPlanResult> lowest_plan;  // the plan that set the lowest peak, when one did
  auto found = [&](const std::vector<size_t>& plans, PlanEvaluation e) {
    if (e.peak_bytes >= out.lowest_peak) return;
    out.lowest_peak = e.peak_bytes;
    BudgetPlanResult r;
    r.met = true;
    r.plans = evaluator.spec_builder().Canonical(plans);
    r.evaluation = std::move(e);
    r.method = PlanMethod::kNone;
    r.gap = -1;
    lowest_plan = std::move(r);
  };
  found(all, std::move(lowest));
  // With checkpoint plans among the candidates, all of them at once (per-block checkpointing) may
  // go lower than every candidate (PlanForBudget falls back on both).
  {
    const std::vector<size_t> checkpoints = CheckpointCandidates(evaluator.spec_builder(), all);
    if (!checkpoints.empty()) {
      MEMOPT_ASSIGN_OR_RETURN(PlanEvaluation e, evaluator.Evaluate(checkpoints));
      found(checkpoints, std::move(e));
    }
  }
  // Every candidate at once is not always the lowest peak (recomputing everything adds transients,
  // e.g. in ConvNets): bisect on budgets the integer program meets, to 0.5% of the peak. On graphs
  // small enough for the greedy search, a budget the search meets counts too: the program's step
  // model misses interacting units (private chains only pay with the plans they copy).
  {
    int64_t lo = evaluator.weights_and_inputs_bytes(), hi = out.lowest_peak;
    for (int i = 0; i < 16 && hi - lo > out.unoptimized_peak / 200; ++i) {
      BudgetPlanOptions probe = options.plan;
      probe.budget_bytes = lo + (hi - lo) / 2;
      probe.greedy_fallback = all.size() <= kBisectedBySearch;
      MEMOPT_ASSIGN_OR_RETURN(BudgetPlanResult r, PlanForBudget(evaluator, probe));
      if (r.met) {
        hi = r.evaluation.peak_bytes;
        lowest_plan = std::move(r);
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
      if (r.evaluation.peak_bytes < hi) {
        hi = r.evaluation.peak_bytes;
        lowest_plan = std::move(r);
      }
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
    // Beyond kSearchedCandidates the greedy search's rounds would take minutes (96 layers); the
    // known low-peak sets (PlanForBudget) still answer a budget the program misses.
    plan.greedy_fallback = plan.greedy_fallback && all.size() <= kSearchedCandidates;
    MEMOPT_ASSIGN_OR_RETURN(BudgetPlanResult r, PlanForBudget(evaluator, plan));
    // The planner at exactly the lowest peak may miss the plan a probe above it found.
    if (!r.met && lowest_plan && lowest_plan->evaluation.peak_bytes <= budget) {
      r = *lowest_plan;
      r.met = true;
    }
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
