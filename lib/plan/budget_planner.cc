#include "plan/budget_planner.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "plan/layer_checkpoint.h"

namespace memopt {
namespace {

std::vector<size_t> With(std::vector<size_t> set, size_t c) {
  set.insert(std::lower_bound(set.begin(), set.end(), c), c);
  return set;
}

std::vector<size_t> Without(std::vector<size_t> set, size_t c) {
  set.erase(std::remove(set.begin(), set.end(), c), set.end());
  return set;
}

bool Contains(const std::vector<size_t>& set, size_t c) { return std::binary_search(set.begin(), set.end(), c); }

/// Above this many candidates the greedy rounds are lazy (see Search::Greedy).
constexpr size_t kExactGreedyCandidates = 96;

class Search {
 public:
  Search(const PlanEvaluator& evaluator, const BudgetPlanOptions& options)
      : ev_(evaluator), budget_(options.budget_bytes), max_evaluations_(options.max_evaluations),
        objective_(options.objective), groups_(options.groups) {
    if (groups_.empty()) {
      candidates_ = options.candidates;
    } else {
      for (size_t g = 0; g < groups_.size(); ++g) candidates_.push_back(g);
    }
    std::sort(candidates_.begin(), candidates_.end());
    candidates_.erase(std::unique(candidates_.begin(), candidates_.end()), candidates_.end());
  }

  /// The plans a set of units stands for (units are plans, or groups of plans).
  std::vector<size_t> Expand(const std::vector<size_t>& set) const {
    return groups_.empty() ? set : UnitPlans(groups_, set);
  }

  Expected<PlanEvaluation> Eval(const std::vector<size_t>& set, bool want_curve = false) {
    ++evaluations_;
    return ev_.Evaluate(Expand(set), want_curve, budget_);
  }

  /// The objective's cost of an evaluated set / of a set of units.
  double Cost(const PlanEvaluation& e) const {
    return objective_ == PlanObjective::kTime ? e.added_seconds : static_cast<double>(e.added_flops);
  }
  double CostOf(const std::vector<size_t>& set) const { return ev_.CostOf(Expand(set), objective_); }

  bool Fits(const PlanEvaluation& e) const { return e.peak_bytes <= budget_; }
  bool OutOfEvaluations() const { return evaluations_ >= max_evaluations_; }
  int evaluations() const { return evaluations_; }
  const std::vector<size_t>& candidates() const { return candidates_; }

  /// Forward greedy from the empty set. Returns false when no candidate lowers the excess any more.
  /// Up to kExactGreedyCandidates every round evaluates every candidate. Past it (hundreds of
  /// layers), rounds are lazy: candidates are tried in the order of their score in the round that
  /// last evaluated them, and the round stops at the first one whose old score is below the best
  /// score found in this round (scores mostly shrink as picks accumulate). This turns the
  /// quadratic number of evaluations into roughly linear, at the risk of a slightly different pick.
  Status Greedy(std::vector<size_t>& set, PlanEvaluation& cur) {
    const bool lazy = candidates_.size() > kExactGreedyCandidates;
    std::map<size_t, double> last_score;  // candidate -> score when last evaluated
    auto bound = [&](size_t c) {  // never evaluated: unbounded
      auto it = last_score.find(c);
      return it == last_score.end() ? std::numeric_limits<double>::infinity() : it->second;
    };
    while (!Fits(cur) && !OutOfEvaluations()) {
      bool found = false;
      double best_score = 0, best_cost = 0;
      size_t best = 0;
      PlanEvaluation best_eval;
      std::vector<size_t> order;
      for (size_t c : candidates_) {
        if (!Contains(set, c)) order.push_back(c);
      }
      if (lazy) {
        std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return bound(a) > bound(b); });
      }
      for (size_t c : order) {
        if (lazy && found && bound(c) < best_score) break;
        MEMOPT_ASSIGN_OR_RETURN(PlanEvaluation e, Eval(With(set, c)));
        const double gain = cur.excess - e.excess;
        const double cost = std::max(0.0, Cost(e) - Cost(cur));
        const double score = gain / (cost + 1e-15);
        last_score[c] = gain > 0 ? score : 0.0;
        if (gain <= 0) continue;
        if (!found || score > best_score || (score == best_score && cost < best_cost)) {
          found = true;
          best_score = score;
          best_cost = cost;
          best = c;
          best_eval = std::move(e);
        }
        if (OutOfEvaluations()) break;
      }
      if (!found) break;
      set = With(set, best);
      cur = std::move(best_eval);
    }
    return Status::Ok();
  }

  /// Drops picks the budget does not need, the most expensive (marginal cost) first.
  Status Prune(std::vector<size_t>& set, PlanEvaluation& cur) {
    bool changed = true;
    while (changed && !OutOfEvaluations()) {
      changed = false;
      for (size_t c : ByMarginalCostDesc(set)) {
        if (!Contains(set, c)) continue;
        std::vector<size_t> smaller = Without(set, c);
        MEMOPT_ASSIGN_OR_RETURN(PlanEvaluation e, Eval(smaller));
        if (Fits(e)) {
          set = std::move(smaller);
          cur = std::move(e);
          changed = true;
        }
        if (OutOfEvaluations()) break;
      }
    }
    return Status::Ok();
  }

  /// Replaces a pick by a cheaper candidate while the budget holds (first improvement), then
  /// prunes again; repeats until nothing improves.
  Status Swap(std::vector<size_t>& set, PlanEvaluation& cur) {
    std::vector<size_t> outside_by_cost;
    for (size_t c : candidates_) outside_by_cost.push_back(c);
    std::sort(outside_by_cost.begin(), outside_by_cost.end(), [&](size_t a, size_t b) {
      const double ca = CostOf({a}), cb = CostOf({b});
      return ca != cb ? ca < cb : a < b;
    });
    bool improved = true;
    while (improved && !OutOfEvaluations()) {
      improved = false;
      const double current = CostOf(set);
      for (size_t c : ByMarginalCostDesc(set)) {
        for (size_t d : outside_by_cost) {
          if (Contains(set, d)) continue;
          std::vector<size_t> trial = With(Without(set, c), d);
          if (CostOf(trial) >= current * (1 - 1e-9)) continue;
          MEMOPT_ASSIGN_OR_RETURN(PlanEvaluation e, Eval(trial));
          if (Fits(e)) {
            set = std::move(trial);
            cur = std::move(e);
            improved = true;
            break;
          }
          if (OutOfEvaluations()) return Status::Ok();
        }
        if (improved) break;
      }
      if (improved) MEMOPT_RETURN_IF_ERROR(Prune(set, cur));
    }
    return Status::Ok();
  }

 private:
  std::vector<size_t> ByMarginalCostDesc(const std::vector<size_t>& set) const {
    const double total = CostOf(set);
    std::vector<std::pair<double, size_t>> keyed;
    for (size_t c : set) keyed.emplace_back(total - CostOf(Without(set, c)), c);
    std::sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first > b.first : a.second < b.second;
    });
    std::vector<size_t> out;
    for (const auto& [cost, c] : keyed) out.push_back(c);
    return out;
  }

  const PlanEvaluator& ev_;
  int64_t budget_;
  int max_evaluations_;
  PlanObjective objective_;
  std::vector<std::vector<size_t>> groups_;
  std::vector<size_t> candidates_;
  int evaluations_ = 0;
};

}  // namespace

std::vector<std::vector<size_t>> WholeClusterGroups(const ScanResult& scan, const std::vector<size_t>& candidates) {
  const std::set<size_t> allowed(candidates.begin(), candidates.end());
  std::map<std::pair<std::string, int>, std::vector<size_t>> by_cluster;
  std::vector<std::pair<std::string, int>> first_seen;
  for (size_t i = 0; i < scan.plans.size(); ++i) {
    const auto key = std::make_pair(scan.plans[i].cluster_id, scan.plans[i].type());
    auto [it, inserted] = by_cluster.try_emplace(key);
    if (inserted) first_seen.push_back(key);
    it->second.push_back(i);
  }
  std::vector<std::vector<size_t>> groups;
  for (const auto& key : first_seen) {
    const std::vector<size_t>& members = by_cluster.at(key);
    const bool whole = std::all_of(members.begin(), members.end(), [&](size_t i) { return allowed.count(i) != 0; });
    if (whole) groups.push_back(members);
  }
  return groups;
}

std::vector<size_t> BudgetCandidates(const ScanResult& scan, int level, const RewriteSpecBuilder& builder) {
  std::set<std::string> type1_ids;
  for (const RecomputePlan& p : scan.plans) {
    if (p.type() == 1) type1_ids.insert(p.cluster_id);
  }
  std::vector<size_t> out;
  for (size_t i = 0; i < scan.plans.size(); ++i) {
    const RecomputePlan& p = scan.plans[i];
    if (p.type() == 2 && (level < 2 || type1_ids.count(p.cluster_id))) continue;
    if (!builder.Supported(i)) continue;
    out.push_back(i);
  }
  return out;
}

std::vector<size_t> WithSplits(const RewriteSpecBuilder& builder, const std::vector<size_t>& candidates) {
  std::vector<size_t> out = candidates;
  // Chains among the candidates: private(p) changes nothing unless p's clones read another
  // candidate's entry outputs, keep(p, 0) nothing unless another candidate's clones read p's.
  const ScanResult& scan = builder.scan();
  const Graph& graph = builder.graph();
  std::unordered_map<ValueId, size_t> entry_of;  // entry output -> candidate
  for (size_t p : candidates) {
    if (builder.IsVariant(p)) continue;
    for (ValueId o : graph.node(scan.plans[p].entry).outputs) {
      if (o != kNone) entry_of.emplace(o, p);
    }
  }
  std::unordered_set<size_t> reads_chain, read_by_chain;
  for (size_t p : candidates) {
    if (builder.IsVariant(p)) continue;
    for (NodeId n : scan.plans[p].subgraph) {
      for (ValueId v : graph.node(n).inputs) {
        auto it = v == kNone ? entry_of.end() : entry_of.find(v);
        if (it == entry_of.end() || it->second == p) continue;
        reads_chain.insert(p);
        read_by_chain.insert(it->second);
      }
    }
  }
  std::vector<size_t> variants;  // keeps and private chains
  for (size_t p : candidates) {
    if (builder.IsVariant(p)) continue;
    for (size_t j = 1; j < builder.Readers(p).size(); ++j) {
      out.push_back(static_cast<size_t>(builder.SplitIndex(p, static_cast<int32_t>(j))));
    }
    for (size_t j = read_by_chain.count(p) ? 0 : 1; j < builder.Readers(p).size(); ++j) {
      variants.push_back(static_cast<size_t>(builder.KeepIndex(p, static_cast<int32_t>(j))));
    }
    if (builder.PrivateIndex(p) >= 0 && reads_chain.count(p)) variants.push_back(static_cast<size_t>(builder.PrivateIndex(p)));
  }
  // Keeps and private chains multiply the interacting units of the integer program (a plan's
  // variants share its keys) and the private copies of a set of chained plans grow with the chain
  // lengths: they are offered on small graphs (the exact reference's scale), where they close the
  // gap to the general optimum, not on deep ones.
  constexpr size_t kMaxVariants = 64;
  if (variants.size() <= kMaxVariants) out.insert(out.end(), variants.begin(), variants.end());
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

namespace {

/// The simulation-driven search: forward greedy and reverse passes, each pruned, the cheaper
/// feasible one improved by swaps. Fills `found` and returns true when a plan meets the budget;
/// otherwise `found` is the lowest peak seen.
Expected<bool> SearchPlan(Search& search, const BudgetPlanResult& anchors, std::vector<size_t>& found,
                          PlanEvaluation& found_eval) {
  // 1. Forward greedy + prune.
  std::vector<size_t> greedy;
  PlanEvaluation greedy_eval = anchors.baseline;
  MEMOPT_RETURN_IF_ERROR(search.Greedy(greedy, greedy_eval));
  if (search.Fits(greedy_eval)) MEMOPT_RETURN_IF_ERROR(search.Prune(greedy, greedy_eval));

  // 2. Reverse pass from every candidate.
  std::vector<size_t> reverse = search.candidates();
  PlanEvaluation reverse_eval = anchors.all_candidates;
  if (search.Fits(reverse_eval)) MEMOPT_RETURN_IF_ERROR(search.Prune(reverse, reverse_eval));

  // 3. The cheaper feasible one, improved by swaps; else the lowest peak seen.
  std::vector<size_t>* best = nullptr;
  PlanEvaluation* best_eval = nullptr;
  auto consider = [&](std::vector<size_t>& set, PlanEvaluation& e) {
    if (!search.Fits(e)) return;
    if (best == nullptr || search.Cost(e) < search.Cost(*best_eval) ||
        (search.Cost(e) == search.Cost(*best_eval) && set.size() < best->size())) {
      best = &set;
      best_eval = &e;
    }
  };
  consider(greedy, greedy_eval);
  consider(reverse, reverse_eval);
  if (best != nullptr) {
    MEMOPT_RETURN_IF_ERROR(search.Swap(*best, *best_eval));
    found = search.Expand(*best);
    found_eval = *best_eval;
    return true;
  }
  if (greedy_eval.peak_bytes <= anchors.all_candidates.peak_bytes) {
    found = search.Expand(greedy);
    found_eval = greedy_eval;
  } else {
    found = search.Expand(search.candidates());
    found_eval = anchors.all_candidates;
  }
  return false;
}

Expected<BudgetPlanResult> PlanOnce(const PlanEvaluator& evaluator, const BudgetPlanOptions& options) {
  Search search(evaluator, options);
  BudgetPlanResult result;
  // With the curves when the integer program will use them (its step model starts from both).
  MEMOPT_ASSIGN_OR_RETURN(result.baseline, search.Eval({}, options.integer_program));
  MEMOPT_ASSIGN_OR_RETURN(result.all_candidates, search.Eval(search.candidates(), options.integer_program));
  auto drop_curves = [&result] {
    for (PlanEvaluation* e : {&result.baseline, &result.all_candidates}) {
      e->live_at_step.clear();
      e->step_original.clear();
    }
  };
  if (search.Fits(result.baseline)) {
    drop_curves();
    result.met = true;
    result.evaluation = result.baseline;
    result.evaluations = search.evaluations();
    return result;
  }

  // 0. The integer program (exact for units that do not interact, checked by simulation).
  if (options.integer_program) {
    BudgetIlpOptions ilp;
    ilp.budget_bytes = options.budget_bytes;
    ilp.objective = options.objective;
    ilp.time_limit_seconds = options.ilp_time_limit_seconds;
    ilp.base = &result.baseline;
    ilp.every_unit = &result.all_candidates;
    if (options.groups.empty()) {
      for (size_t c : search.candidates()) ilp.units.push_back({c});
    } else {
      ilp.units = options.groups;
    }
    for (size_t p : options.start_plans) {
      const auto& cs = search.candidates();
      auto it = std::lower_bound(cs.begin(), cs.end(), p);
      if (options.groups.empty() && it != cs.end() && *it == p) ilp.start_units.push_back(static_cast<size_t>(it - cs.begin()));
    }
    MEMOPT_ASSIGN_OR_RETURN(BudgetIlpResult solved, SolveBudgetIlp(evaluator, ilp));
    drop_curves();
    result.evaluations += solved.evaluations;
    if (solved.feasible) {
      // Units the exact peaks show unneeded are already dropped (budget_ilp.h).
      std::vector<size_t> set;
      for (size_t u : solved.units) set.push_back(search.candidates()[u]);
      PlanEvaluation eval = std::move(solved.evaluation);
      result.met = true;
      result.plans = search.Expand(set);
      result.evaluation = std::move(eval);
      result.method = PlanMethod::kIntegerProgram;
      result.optimal = solved.optimal;
      result.gap = solved.gap;
      result.ilp_note = solved.note;
      // Where units interacted (the step model missed the chosen plan's exact peaks), the model's
      // optimum need not be the true one: on small candidate sets the search runs too and its plan
      // is taken when cheaper (then without a bound).
      if (options.greedy_fallback && !solved.model_exact && search.candidates().size() <= kExactGreedyCandidates) {
        std::vector<size_t> found;
        PlanEvaluation found_eval;
        MEMOPT_ASSIGN_OR_RETURN(bool met, SearchPlan(search, result, found, found_eval));
        if (met && search.Cost(found_eval) < search.Cost(result.evaluation) * (1 - 1e-9)) {
          result.plans = std::move(found);
          result.evaluation = std::move(found_eval);
          result.method = PlanMethod::kGreedySearch;
          result.optimal = false;
          result.gap = -1;
          result.ilp_note = "the search found a cheaper plan than its step model's optimum";
        }
      }
      result.evaluations += search.evaluations();
      return result;
    }
    result.ilp_note = solved.why_not;
    if (!options.greedy_fallback) {  // the caller asked for the program's answer only
      result.method = PlanMethod::kIntegerProgram;
      result.gap = -1;
      result.evaluation = result.all_candidates.peak_bytes < result.baseline.peak_bytes ? result.all_candidates
                                                                                         : result.baseline;
      result.evaluations += search.evaluations();
      return result;
    }
  }
  result.method = PlanMethod::kGreedySearch;
  MEMOPT_ASSIGN_OR_RETURN(result.met, SearchPlan(search, result, result.plans, result.evaluation));
  result.evaluations += search.evaluations();
  return result;
}

}  // namespace

std::string_view PlanMethodName(PlanMethod method) {
  switch (method) {
    case PlanMethod::kNone:
      return "";
    case PlanMethod::kIntegerProgram:
      return "integer program";
    case PlanMethod::kGreedySearch:
      return "greedy search";
  }
  return "";
}

std::vector<size_t> CheckpointCandidates(const RewriteSpecBuilder& builder, const std::vector<size_t>& candidates) {
  std::vector<size_t> out;
  for (size_t c : candidates) {
    if (!builder.IsVariant(c) && IsCheckpointCluster(builder.scan().plans[c].cluster_id)) out.push_back(c);
  }
  return out;
}

namespace {

/// When `r` misses the budget: the cheapest plan set known to reach low peaks that meets it, if
/// one does: every candidate at once, and every checkpoint plan at once (per-block
/// checkpointing, plan/layer_checkpoint.h), which the program and the search can miss when
/// checkpoint plans interact with the others.
Status MeetWithKnownSets(const PlanEvaluator& evaluator, const BudgetPlanOptions& options, BudgetPlanResult& r) {
  if (r.met || !options.groups.empty()) return Status::Ok();
  const std::vector<size_t> checkpoints = CheckpointCandidates(evaluator.spec_builder(), options.candidates);
  std::vector<std::vector<size_t>> sets;
  // Every candidate: evaluated by the planner already (all_candidates); only when it meets.
  if (r.all_candidates.peak_bytes <= options.budget_bytes) sets.push_back(options.candidates);
  if (!checkpoints.empty()) sets.push_back(checkpoints);
  const auto cost = [&](const PlanEvaluation& e) {
    return options.objective == PlanObjective::kTime ? e.added_seconds : static_cast<double>(e.added_flops);
  };
  for (std::vector<size_t>& set : sets) {
    MEMOPT_ASSIGN_OR_RETURN(PlanEvaluation e, evaluator.Evaluate(set));
    ++r.evaluations;
    if (e.peak_bytes > options.budget_bytes || (r.met && cost(e) >= cost(r.evaluation))) continue;
    r.met = true;
    r.plans = std::move(set);
    r.evaluation = std::move(e);
    r.method = PlanMethod::kGreedySearch;  // no optimality bound
    r.optimal = false;
    r.gap = -1;
  }
  return Status::Ok();
}

Expected<BudgetPlanResult> PlanForBudgetPasses(const PlanEvaluator& evaluator, const BudgetPlanOptions& options);

}  // namespace

Expected<BudgetPlanResult> PlanForBudget(const PlanEvaluator& evaluator, const BudgetPlanOptions& options) {
  MEMOPT_ASSIGN_OR_RETURN(BudgetPlanResult r, PlanForBudgetPasses(evaluator, options));
  MEMOPT_RETURN_IF_ERROR(MeetWithKnownSets(evaluator, options, r));
  // A variant implies its plan, and a later keep voids earlier keeps and splits
  // (RewriteSpecBuilder::Build): list what the written config selects.
  r.plans = evaluator.spec_builder().Canonical(r.plans);
  return r;
}

namespace {

Expected<BudgetPlanResult> PlanForBudgetPasses(const PlanEvaluator& evaluator, const BudgetPlanOptions& options) {
  const RewriteSpecBuilder& builder = evaluator.spec_builder();
  // memopt's own plans (splits, and checkpoint plans: plan/layer_checkpoint.h) are planned in a
  // second pass, as below; ORT's plans first.
  std::vector<size_t> plain, splits;
  for (size_t c : options.candidates) {
    const bool own = builder.IsVariant(c) || IsCheckpointCluster(builder.scan().plans[c].cluster_id);
    (own ? splits : plain).push_back(c);
  }
  if (!options.groups.empty() || splits.empty()) return PlanOnce(evaluator, options);
  // With splits the program's units interact more (a plan's splits share its keys), its
  // interaction groups grow past what it models exactly, and its relaxation gets much harder: the
  // budget is planned without splits first, and with them only where they can pay:
  //   * up to kAllSplits splits: with every one, and the better of the two plans is kept (splits
  //     never make a plan worse than ORT's model gives);
  //   * more (deep graphs): only when the plan without splits misses the budget, and then only
  //     the splits whose gap between two readers spans a step still over the budget with every
  //     plain candidate applied (the steps a second clone can take the value out of), at most
  //     kMaxSplits of them, the largest values first.
  constexpr size_t kAllSplits = 256, kMaxSplits = 512;
  BudgetPlanOptions without = options;
  without.candidates = plain;
  MEMOPT_ASSIGN_OR_RETURN(BudgetPlanResult a, PlanOnce(evaluator, without));
  if (splits.size() > kAllSplits) {
    if (a.met) return a;
    const ScanResult& scan = builder.scan();
    MEMOPT_ASSIGN_OR_RETURN(PlanEvaluation every, evaluator.Evaluate(plain, /*want_curve=*/true));
    const size_t steps = scan.order.order.size();
    std::vector<int32_t> hot_before(steps + 1, 0);  // hot positions below each position
    std::vector<char> hot(steps, 0);
    for (size_t i = 0; i < every.live_at_step.size(); ++i) {
      const NodeId n = every.step_original[i];
      const int32_t pos = n == kNone ? -1 : scan.order.position[n];
      if (pos >= 0 && every.live_at_step[i] > options.budget_bytes) hot[static_cast<size_t>(pos)] = 1;
    }
    for (size_t i = 0; i < steps; ++i) hot_before[i + 1] = hot_before[i] + hot[i];
    std::vector<std::pair<int64_t, size_t>> useful;  // (-bytes of the entry's outputs, split)
    for (size_t sp : splits) {
      const size_t p = builder.BasePlan(sp);
      const std::vector<NodeId>& readers = builder.Readers(p);
      if (readers.empty()) continue;
      // A split: the gap between its two readers; a checkpoint plan: from its entry to the first
      // backward reader (the span the stashed value is dropped for).
      const int32_t j = builder.SplitReader(sp);
      const int32_t from = j == 0 ? scan.order.position[scan.plans[p].entry] + 1
                                  : scan.order.position[readers[static_cast<size_t>(j - 1)]] + 1;
      const int32_t to = scan.order.position[readers[static_cast<size_t>(j)]];  // exclusive
      if (from < 0 || to <= from || hot_before[static_cast<size_t>(to)] == hot_before[static_cast<size_t>(from)]) continue;
      int64_t bytes = 0;
      for (const StashedOutput& so : scan.plans[p].outputs) bytes += evaluator.value_bytes(so.value);
      useful.emplace_back(-bytes, sp);
    }
    if (useful.empty()) return a;
    std::sort(useful.begin(), useful.end());
    if (useful.size() > kMaxSplits) useful.resize(kMaxSplits);
    splits.clear();
    for (const auto& [neg_bytes, sp] : useful) splits.push_back(sp);
  }
  BudgetPlanOptions with = options;
  with.candidates = plain;
  if (a.met && a.method == PlanMethod::kIntegerProgram) with.start_plans = a.plans;
  with.candidates.insert(with.candidates.end(), splits.begin(), splits.end());
  std::sort(with.candidates.begin(), with.candidates.end());
  MEMOPT_ASSIGN_OR_RETURN(BudgetPlanResult b, PlanOnce(evaluator, with));
  const int evaluations = a.evaluations + b.evaluations;
  auto cost = [&](const BudgetPlanResult& r) {
    return options.objective == PlanObjective::kTime ? r.evaluation.added_seconds
                                                     : static_cast<double>(r.evaluation.added_flops);
  };
  bool take_a;
  if (a.met != b.met) {
    take_a = a.met;
  } else if (a.met) {
    take_a = cost(a) <= cost(b);
  } else {
    take_a = a.evaluation.peak_bytes <= b.evaluation.peak_bytes;
  }
  // The plan is stated optimal over the space with splits only when the program proved that: a's
  // proof covers the plans without them. b's bound (its plan's cost less its gap) bounds both.
  double bound_gap = 0;
  const bool b_unproven = take_a && a.met && a.method == PlanMethod::kIntegerProgram && !b.optimal;
  if (b_unproven && b.met && b.method == PlanMethod::kIntegerProgram && b.gap >= 0 && cost(a) > 0) {
    bound_gap = std::max(0.0, 1 - cost(b) * (1 - b.gap) / cost(a));
  }
  const std::string b_note = b.ilp_note;
  BudgetPlanResult out = take_a ? std::move(a) : std::move(b);
  if (b_unproven && (bound_gap > kMipGap || !b.met || b.gap < 0)) {
    out.optimal = false;
    out.gap = b.met && b.gap >= 0 ? bound_gap : -1;
    if (out.gap < 0) out.ilp_note = b_note.empty() ? "the program with splits found no bound" : b_note;
  }
  if (take_a && b.all_candidates.peak_bytes < out.all_candidates.peak_bytes) out.all_candidates = b.all_candidates;
  out.evaluations = evaluations;
  return out;
}

}  // namespace

PlanQuality QualityOf(const BudgetPlanResult& result) {
  if (result.method != PlanMethod::kIntegerProgram || result.gap < 0) return PlanQuality::kNoBound;
  return result.optimal ? PlanQuality::kOptimal : PlanQuality::kWithinGap;
}

std::string DescribeQuality(const BudgetPlanResult& result) {
  switch (QualityOf(result)) {
    case PlanQuality::kOptimal:
      return "optimal for the step model (within 0.5%)";
    case PlanQuality::kWithinGap:
      return fmt::format("within {:.1f}% of the step model's LP bound (time limit)", 100.0 * result.gap);
    case PlanQuality::kNoBound:
      break;
  }
  if (result.method == PlanMethod::kIntegerProgram) return "no optimality bound (" + result.ilp_note + ")";
  if (!result.ilp_note.empty()) return "no optimality bound (the integer program gave way: " + result.ilp_note + ")";
  return "no optimality bound";
}

}  // namespace memopt
