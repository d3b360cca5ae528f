#include "plan/budget_ilp.h"

#include <glpk.h>

#include <algorithm>
#include <climits>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <utility>

#include "plan/program_units.h"
#include "plan/step_effect.h"

namespace memopt {
namespace {

struct Term {
  int32_t unit;
  double delta;  ///< bytes
};

/// One constraint: base + sum(delta * x) <= budget - tightening.
struct Row {
  int32_t step = -1;  ///< position in the base order
  double base = 0;
  double tightening = 0;  ///< bytes found by the exact check where effects interact
  std::vector<Term> terms;  ///< filled when the row becomes active (EffectModel::Terms)
  bool active = false;
};

/// A unit's effect on the step peaks as runs of equal change (plan/step_effect.h): memory grows
/// with the runs (a few per unit: a saving interval, clone transients), not with units x steps.
using Run = StepRun;

struct EffectModel {
  size_t num_steps = 0;
  std::vector<std::vector<Run>> runs;  ///< per unit, ascending, disjoint; steps are base positions

  /// The change of every step's peak from the runs `keep(unit, run)` accepts (their sum).
  template <typename Keep>
  std::vector<double> Sum(Keep keep) const {
    std::vector<double> diff(num_steps + 1, 0.0);
    for (size_t u = 0; u < runs.size(); ++u) {
      for (const Run& r : runs[u]) {
        if (!keep(u, r)) continue;
        diff[static_cast<size_t>(r.begin)] += static_cast<double>(r.delta);
        diff[static_cast<size_t>(r.end)] -= static_cast<double>(r.delta);
      }
    }
    std::vector<double> change(num_steps, 0.0);
    double running = 0;
    for (size_t n = 0; n < num_steps; ++n) change[n] = running += diff[n];
    return change;
  }

  /// The change of every step's peak when the units with x[u] are applied.
  std::vector<double> Change(const std::vector<char>& x) const {
    return Sum([&x](size_t u, const Run&) { return x[u] != 0; });
  }

  /// The terms of `step`'s row: each unit's change there.
  std::vector<Term> Terms(int32_t step) const {
    std::vector<Term> terms;
    for (size_t u = 0; u < runs.size(); ++u) {
      const std::vector<Run>& rs = runs[u];
      auto it = std::upper_bound(rs.begin(), rs.end(), step, [](int32_t n, const Run& r) { return n < r.begin; });
      if (it == rs.begin()) continue;
      --it;
      if (step < it->end) terms.push_back({static_cast<int32_t>(u), static_cast<double>(it->delta)});
    }
    return terms;
  }
};

/// Room asked of a row, as a fraction of the budget, when the solver accepted a violation of it
/// within its feasibility tolerance (rows are scaled to the budget; GLPK's tolerance is 1e-7).
constexpr double kRowTolerance = 1e-6;

struct GlpkDeleter {
  void operator()(glp_prob* p) const { glp_delete_prob(p); }
};

struct Solve {
  bool solved = false;
  bool optimal = false;
  double gap = 0;
  std::vector<char> x;
};

/// The objective counts every cloned node once, however many chosen units clone it. A node only
/// one unit clones adds its cost to that unit's x_u; a node several units clone gets a variable
/// y_k with y_k >= x_u for each of them (y_k ends at 0 or 1), so it is paid once.
struct CloneCosts {
  std::vector<double> unit_cost;               ///< per unit: the nodes only it clones
  std::vector<double> cost;                    ///< per shared cloned node
  std::vector<std::vector<int32_t>> per_unit;  ///< per unit: indices into `cost`
};

/// A solution of the program over the active rows from its LP relaxation `lp_x`: units by LP value
/// (then cheapest first) are added while an active row is over the budget and the unit lowers one
/// of those (then, if rows are still over, any unit in that order), then units no row needs are
/// dropped, the most expensive first. Empty when every unit together leaves a row over.
/// O(nonzeros + units log units).
std::vector<char> RoundLp(const std::vector<double>& lp_x, const std::vector<Row>& rows, const CloneCosts& clones,
                          const ProgramUnits& program, double budget) {
  const size_t n = lp_x.size();
  struct Entry {
    int32_t row;
    double delta;
  };
  std::vector<std::vector<Entry>> column(n);
  std::vector<double> slack;  // per active row: room left under the budget
  for (const Row& row : rows) {
    if (!row.active) continue;
    const int32_t r = static_cast<int32_t>(slack.size());
    slack.push_back(budget - row.tightening - row.base);
    for (const Term& t : row.terms) column[static_cast<size_t>(t.unit)].push_back({r, t.delta});
  }
  auto cost = [&](size_t u) {
    double c = clones.unit_cost[u];
    for (int32_t k : clones.per_unit[u]) c += clones.cost[static_cast<size_t>(k)];
    return c;
  };
  int over = 0;
  for (double sl : slack) over += sl < 0;
  std::vector<char> x(n, 0);
  auto apply = [&](size_t u, double sign) {
    for (const Entry& e : column[u]) {
      const bool was_over = slack[static_cast<size_t>(e.row)] < 0;
      slack[static_cast<size_t>(e.row)] -= sign * e.delta;
      over += (slack[static_cast<size_t>(e.row)] < 0) - was_over;
    }
  };
  // Choosing a unit of an interaction group that has one chosen already takes the group's unit
  // for both together (at most one per group).
  std::vector<int32_t> chosen_in_group(program.group_units.size(), -1);
  // Links of single units (ProgramUnits::implied, at_most_one): a unit comes with the unit it
  // requires, and one that would make a second unit of a set chosen is passed over.
  std::vector<int32_t> required(n, -1);
  std::vector<int32_t> dependents(n, 0);  // chosen units that require this one
  std::vector<std::vector<size_t>> sets_of(n);
  std::vector<char> set_taken(program.at_most_one.size(), 0);
  for (const auto& [u, b] : program.implied) required[static_cast<size_t>(u)] = b;
  for (size_t k = 0; k < program.at_most_one.size(); ++k) {
    for (int32_t u : program.at_most_one[k]) sets_of[static_cast<size_t>(u)].push_back(k);
  }
  auto sets_free = [&](size_t u) {
    return std::none_of(sets_of[u].begin(), sets_of[u].end(), [&](size_t k) { return set_taken[k] != 0; });
  };
  auto take = [&](size_t u, bool on) {
    x[u] = on;
    apply(u, on ? 1 : -1);
    for (size_t k : sets_of[u]) set_taken[k] = on;
    if (required[u] >= 0) dependents[static_cast<size_t>(required[u])] += on ? 1 : -1;
  };
  auto choose = [&](size_t u) {
    const int32_t g = program.group[u];
    if (g < 0) {
      if (x[u] || !sets_free(u)) return;
      const int32_t b = required[u];
      if (b >= 0 && !x[static_cast<size_t>(b)]) {
        if (!sets_free(static_cast<size_t>(b))) return;
        take(static_cast<size_t>(b), true);
      }
      take(u, true);
      return;
    }
    const int32_t current = chosen_in_group[static_cast<size_t>(g)];
    uint32_t mask = program.mask[u];
    if (current >= 0) {
      if ((program.mask[static_cast<size_t>(current)] | mask) == program.mask[static_cast<size_t>(current)]) return;
      mask |= program.mask[static_cast<size_t>(current)];
      x[static_cast<size_t>(current)] = 0;
      apply(static_cast<size_t>(current), -1);
    }
    const int32_t target = program.group_units[static_cast<size_t>(g)][mask];
    x[static_cast<size_t>(target)] = 1;
    apply(static_cast<size_t>(target), 1);
    chosen_in_group[static_cast<size_t>(g)] = target;
  };
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return lp_x[a] != lp_x[b] ? lp_x[a] > lp_x[b] : cost(a) < cost(b);
  });
  for (size_t u : order) {
    if (over == 0) break;
    if (x[u]) continue;
    const bool helps = std::any_of(column[u].begin(), column[u].end(), [&](const Entry& e) {
      return e.delta < 0 && slack[static_cast<size_t>(e.row)] < 0;
    });
    if (helps || lp_x[u] > 0.999) choose(u);
  }
  for (size_t u : order) {  // rows that need units no single violated row asks for (interactions)
    if (over == 0) break;
    if (!x[u]) choose(u);
  }
  if (over > 0) return {};
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return cost(a) != cost(b) ? cost(a) > cost(b) : a < b; });
  for (size_t u : order) {
    if (!x[u] || dependents[u] > 0) continue;
    const bool needed = std::any_of(column[u].begin(), column[u].end(), [&](const Entry& e) {
      return slack[static_cast<size_t>(e.row)] + e.delta < 0;
    });
    if (needed) continue;
    if (program.group[u] < 0) {
      take(u, false);
    } else {
      x[u] = 0;
      apply(u, -1);
    }
  }
  return x;
}

/// Whether `x` satisfies the active rows and the links among units (ProgramUnits).
bool FitsActive(const std::vector<char>& x, const std::vector<Row>& rows, const ProgramUnits& program, double budget) {
  for (const Row& row : rows) {
    if (!row.active) continue;
    double total = row.base + row.tightening;
    for (const Term& t : row.terms) total += x[static_cast<size_t>(t.unit)] ? t.delta : 0.0;
    if (total > budget) return false;
  }
  for (const auto& [u, b] : program.implied) {
    if (x[static_cast<size_t>(u)] && !x[static_cast<size_t>(b)]) return false;
  }
  for (const std::vector<int32_t>& set : program.at_most_one) {
    int chosen = 0;
    for (int32_t u : set) chosen += x[static_cast<size_t>(u)] != 0;
    if (chosen > 1) return false;
  }
  return true;
}

/// Solves the program over the active rows. Costs are scaled to at most 1, rows to the budget.
Solve SolveActive(const std::vector<Row>& rows, const CloneCosts& clones, const ProgramUnits& program, double budget,
                  double time_limit, double root_time_limit, const std::vector<char>& start_x) {
  glp_term_out(GLP_OFF);  // the library never prints
  std::unique_ptr<glp_prob, GlpkDeleter> lp(glp_create_prob());
  glp_set_obj_dir(lp.get(), GLP_MIN);
  const int n = static_cast<int>(clones.per_unit.size());
  const int k = static_cast<int>(clones.cost.size());
  glp_add_cols(lp.get(), n + k);
  double max_cost = 1e-300;
  for (double c : clones.cost) max_cost = std::max(max_cost, c);
  for (double c : clones.unit_cost) max_cost = std::max(max_cost, c);
  for (int j = 1; j <= n; ++j) {
    glp_set_col_kind(lp.get(), j, GLP_BV);
    // A tiny tie-breaker: among equal costs, fewer units.
    glp_set_obj_coef(lp.get(), j, clones.unit_cost[static_cast<size_t>(j - 1)] / max_cost + 1e-7);
  }
  for (int j = 1; j <= k; ++j) {
    glp_set_col_bnds(lp.get(), n + j, GLP_DB, 0.0, 1.0);
    glp_set_obj_coef(lp.get(), n + j, clones.cost[static_cast<size_t>(j - 1)] / max_cost);
  }
  std::vector<int> ia{0}, ja{0};
  std::vector<double> ar{0};
  int m = 0;
  // A new row with GLPK's bound type and bounds; entry() puts a coefficient in the last row.
  auto add_row = [&](int type, double lo, double hi) {
    glp_add_rows(lp.get(), 1);
    glp_set_row_bnds(lp.get(), ++m, type, lo, hi);
  };
  auto entry = [&](int column, double coefficient) {
    ia.push_back(m);
    ja.push_back(column);
    ar.push_back(coefficient);
  };
  for (int u = 0; u < n; ++u) {
    for (int32_t c : clones.per_unit[static_cast<size_t>(u)]) {  // y_c - x_u >= 0
      add_row(GLP_LO, 0.0, 0.0);
      entry(n + c + 1, 1.0);
      entry(u + 1, -1.0);
    }
  }
  // A shared node cloned by several units of an at-most-one set is paid by whichever is chosen:
  // y_c >= the sum of their x_u (stronger than y_c >= each x_u in the relaxation).
  for (const std::vector<int32_t>& set : program.at_most_one) {
    std::map<int32_t, std::vector<int32_t>> cloners;  // shared node -> units of the set cloning it
    for (int32_t u : set) {
      for (int32_t c : clones.per_unit[static_cast<size_t>(u)]) cloners[c].push_back(u);
    }
    for (const auto& [c, units] : cloners) {
      if (units.size() < 2) continue;
      add_row(GLP_LO, 0.0, 0.0);
      entry(n + c + 1, 1.0);
      for (int32_t u : units) entry(u + 1, -1.0);
    }
  }
  for (const std::vector<int32_t>& group : program.group_units) {  // at most one unit per group
    add_row(GLP_UP, 0.0, 1.0);
    for (int32_t u : group) {
      if (u >= 0) entry(u + 1, 1.0);
    }
  }
  for (const auto& [u, b] : program.implied) {  // x_u - x_b <= 0
    add_row(GLP_UP, 0.0, 0.0);
    entry(u + 1, 1.0);
    entry(b + 1, -1.0);
  }
  for (const std::vector<int32_t>& set : program.at_most_one) {
    add_row(GLP_UP, 0.0, 1.0);
    for (int32_t u : set) entry(u + 1, 1.0);
  }
  for (const Row& row : rows) {
    if (!row.active) continue;
    add_row(GLP_UP, 0.0, (budget - row.tightening - row.base) / budget);
    for (const Term& t : row.terms) entry(t.unit + 1, t.delta / budget);
  }
  glp_load_matrix(lp.get(), static_cast<int>(ia.size()) - 1, ia.data(), ja.data(), ar.data());

  Solve out;
  const auto start_time = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_time).count(); };
  glp_smcp lp_parm;
  glp_init_smcp(&lp_parm);
  lp_parm.msg_lev = GLP_MSG_OFF;
  // The root relaxation may take longer than the limit (100k-node graphs: a few seconds, and
  // without it there is no plan), but not without end: a degenerate relaxation can run for
  // minutes (split and checkpoint units of 96 layers near the lowest peak), so the root
  // relaxations of one program get ten times its limit together, at least 5 s, and no plan when
  // they run out (`root_time_limit`: what is left of that). The dives run within the time left.
  auto limit_lp = [&] { lp_parm.tm_lim = static_cast<int>(std::max(0.05, time_limit / 4 - elapsed()) * 1000); };
  lp_parm.tm_lim = static_cast<int>(std::max(0.05, root_time_limit) * 1000);
  if (glp_simplex(lp.get(), &lp_parm) != 0 || glp_get_status(lp.get()) != GLP_OPT) return out;  // LP infeasible, or out of time
  lp_parm.tm_lim = INT_MAX;
  const double lp_bound = glp_get_obj_val(lp.get());

  // Incumbents from the LP: the root solution rounded; then, while a quarter of the time lasts, a
  // dive (the unit with the largest fractional value fixed to 1, the LP solved again warm; a fix
  // that makes it infeasible turned to 0) rounded the same way. The cheaper one starts the branch
  // and bound, or is the answer when it is already within kMipGap of the LP bound.
  std::vector<double> lp_x(static_cast<size_t>(n));
  for (int j = 1; j <= n; ++j) lp_x[static_cast<size_t>(j - 1)] = glp_get_col_prim(lp.get(), j);
  auto objective = [&](const std::vector<char>& x) {  // scaled, as the program's objective
    if (x.empty()) return std::numeric_limits<double>::infinity();
    std::vector<char> paid(static_cast<size_t>(k), 0);
    double value = 0;
    for (int u = 0; u < n; ++u) {
      if (!x[static_cast<size_t>(u)]) continue;
      value += glp_get_obj_coef(lp.get(), u + 1);
      for (int32_t c : clones.per_unit[static_cast<size_t>(u)]) {
        if (!paid[static_cast<size_t>(c)]++) value += glp_get_obj_coef(lp.get(), n + c + 1);
      }
    }
    return value;
  };
  auto proven = [&](double value) { return value <= lp_bound + kMipGap * value; };
  std::vector<char> rounded = RoundLp(lp_x, rows, clones, program, budget);
  double rounded_value = objective(rounded);
  if (!proven(rounded_value)) {
    std::unique_ptr<glp_prob, GlpkDeleter> dive(glp_create_prob());
    glp_copy_prob(dive.get(), lp.get(), GLP_OFF);
    bool integral = false;
    while (elapsed() < time_limit / 4) {
      int pick = 0;
      double best = 0;
      for (int j = 1; j <= n; ++j) {
        const double v = glp_get_col_prim(dive.get(), j);
        lp_x[static_cast<size_t>(j - 1)] = v;
        if (v > 1e-6 && v < 1 - 1e-6 && v > best) {
          best = v;
          pick = j;
        }
      }
      if (pick == 0) {
        integral = true;
        break;
      }
      glp_set_col_bnds(dive.get(), pick, GLP_FX, 1.0, 1.0);
      limit_lp();
      if (glp_simplex(dive.get(), &lp_parm) != 0 || glp_get_status(dive.get()) != GLP_OPT) {
        glp_set_col_bnds(dive.get(), pick, GLP_FX, 0.0, 0.0);
        limit_lp();
        if (glp_simplex(dive.get(), &lp_parm) != 0 || glp_get_status(dive.get()) != GLP_OPT) break;
      }
    }
    if (integral) {
      std::vector<char> dived = RoundLp(lp_x, rows, clones, program, budget);
      const double dived_value = objective(dived);
      if (dived_value < rounded_value) {
        rounded = std::move(dived);
        rounded_value = dived_value;
      }
    }
  }
  if (!start_x.empty() && FitsActive(start_x, rows, program, budget)) {  // the caller's plan
    const double start_value = objective(start_x);
    if (start_value < rounded_value) {
      rounded = start_x;
      rounded_value = start_value;
    }
  }
  auto gap_of = [&](double value) { return value <= 0 ? 0.0 : std::max(0.0, (value - lp_bound) / value); };
  auto answer_rounded = [&] {  // the rounded solution as the answer
    out.solved = true;
    out.optimal = proven(rounded_value);
    out.gap = out.optimal ? 0.0 : gap_of(rounded_value);
    out.x = std::move(rounded);
    return out;
  };
  if (!rounded.empty() && (proven(rounded_value) || elapsed() >= time_limit)) return answer_rounded();

  std::vector<double> start(static_cast<size_t>(n + k) + 1, 0.0);  // GLPK's column values, 1-based
  for (int u = 0; u < n && !rounded.empty(); ++u) {
    if (!rounded[static_cast<size_t>(u)]) continue;
    start[static_cast<size_t>(u) + 1] = 1;
    for (int32_t c : clones.per_unit[static_cast<size_t>(u)]) start[static_cast<size_t>(n + c) + 1] = 1;
  }
  struct Callback {
    const std::vector<double>* start;
    bool given = false;
  } callback{&start};
  glp_iocp parm;
  glp_init_iocp(&parm);
  parm.msg_lev = GLP_MSG_OFF;
  parm.presolve = GLP_OFF;  // the LP relaxation is solved above
  parm.mip_gap = kMipGap;
  parm.tm_lim = static_cast<int>(std::max(0.05, std::min(time_limit - elapsed(), 3600.0)) * 1000);
  // Mixed-integer rounding, cover and Gomory cuts with pseudocost branching (measured on 12- to
  // 96-layer synthetic transformers: the defaults run into the time limit more often).
  parm.mir_cuts = GLP_ON;
  parm.cov_cuts = GLP_ON;
  parm.gmi_cuts = GLP_ON;
  parm.clq_cuts = GLP_ON;
  parm.br_tech = GLP_BR_PCH;
  if (!rounded.empty()) {
    parm.cb_info = &callback;
    parm.cb_func = [](glp_tree* tree, void* info) {
      auto* cb = static_cast<Callback*>(info);
      if (glp_ios_reason(tree) != GLP_IHEUR || cb->given) return;
      cb->given = true;
      glp_ios_heur_sol(tree, cb->start->data());
    };
  }
  const int ret = glp_intopt(lp.get(), &parm);
  const int status = glp_mip_status(lp.get());
  if (status != GLP_OPT && status != GLP_FEAS) {  // nothing found in time: the rounded solution
    return rounded.empty() ? out : answer_rounded();
  }
  out.solved = true;
  // Finished (0), or stopped with the incumbent proven within kMipGap of the optimum: optimal
  // for our purpose. Stopped by the time limit: the gap to the root LP bound is reported.
  out.optimal = status == GLP_OPT || ret == 0 || ret == GLP_EMIPGAP;
  const double value = glp_mip_obj_val(lp.get());  // scaled; only ratios to lp_bound matter
  out.gap = out.optimal ? 0.0 : gap_of(value);
  out.x.assign(static_cast<size_t>(n), 0);  // the units; the clone variables follow from them
  for (int j = 1; j <= n; ++j) out.x[static_cast<size_t>(j - 1)] = glp_mip_col_val(lp.get(), j) > 0.5 ? 1 : 0;
  return out;
}

/// The caller's units the chosen program units stand for, ascending.
std::vector<size_t> MembersOf(const ProgramUnits& program, const std::vector<char>& x) {
  std::vector<size_t> out;
  for (size_t u = 0; u < x.size(); ++u) {
    if (x[u]) out.insert(out.end(), program.members[u].begin(), program.members[u].end());
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<size_t> PlansOf(const std::vector<std::vector<size_t>>& units, const std::vector<char>& x) {
  std::vector<size_t> chosen;
  for (size_t u = 0; u < x.size(); ++u) {
    if (x[u]) chosen.push_back(u);
  }
  return UnitPlans(units, chosen);
}

/// Drops chosen units the budget does not need, the most expensive (cost only they pay) first.
/// A unit is tried by simulation only when the step model says the exact step peaks stay within
/// the budget without it (its own effect taken back), so a pass costs one range scan per unit and
/// a simulation per likely drop instead of one per unit.
Status PruneChosen(const PlanEvaluator& evaluator, const StepEffects& effects, const EffectModel& model,
                   const CloneCosts& clones, const ProgramUnits& program, int64_t budget_bytes,
                   std::vector<char>& x, PlanEvaluation& exact, std::vector<int64_t>& peaks, int& evaluations) {
  const double budget = static_cast<double>(budget_bytes);
  bool changed = true;
  while (changed) {
    changed = false;
    // Cost only this unit pays: its own nodes plus shared nodes no other chosen unit clones.
    std::vector<int32_t> cloners(clones.cost.size(), 0);
    for (size_t u = 0; u < x.size(); ++u) {
      if (!x[u]) continue;
      for (int32_t c : clones.per_unit[u]) ++cloners[static_cast<size_t>(c)];
    }
    std::vector<char> required(x.size(), 0);  // by a chosen unit (ProgramUnits::implied)
    for (const auto& [v, b] : program.implied) required[static_cast<size_t>(b)] |= x[static_cast<size_t>(v)];
    std::vector<std::pair<double, size_t>> order;
    for (size_t u = 0; u < x.size(); ++u) {
      if (!x[u] || required[u]) continue;
      double own = clones.unit_cost[u];
      for (int32_t c : clones.per_unit[u]) own += cloners[static_cast<size_t>(c)] == 1 ? clones.cost[static_cast<size_t>(c)] : 0.0;
      order.emplace_back(-own, u);
    }
    std::sort(order.begin(), order.end());
    for (const auto& [neg_cost, u] : order) {
      bool likely = true;
      for (const Run& r : model.runs[u]) {
        if (r.delta >= 0) continue;  // taking back a saving raises these steps
        const int64_t highest = *std::max_element(peaks.begin() + r.begin, peaks.begin() + r.end);
        if (static_cast<double>(highest - r.delta) > budget) {
          likely = false;
          break;
        }
      }
      if (!likely) continue;
      x[u] = 0;
      MEMOPT_ASSIGN_OR_RETURN(PlanEvaluation e, evaluator.Evaluate(PlansOf(program.plans, x), true));
      ++evaluations;
      if (e.peak_bytes <= budget_bytes) {
        peaks = effects.StepPeaks(e);
        exact = std::move(e);
        changed = true;
      } else {
        x[u] = 1;
      }
    }
  }
  return Status::Ok();
}

}  // namespace

std::vector<size_t> UnitPlans(const std::vector<std::vector<size_t>>& units, const std::vector<size_t>& chosen) {
  std::vector<size_t> plans;
  for (size_t u : chosen) plans.insert(plans.end(), units[u].begin(), units[u].end());
  std::sort(plans.begin(), plans.end());
  plans.erase(std::unique(plans.begin(), plans.end()), plans.end());
  return plans;
}

Expected<BudgetIlpResult> SolveBudgetIlp(const PlanEvaluator& evaluator, const BudgetIlpOptions& options) {
  BudgetIlpResult result;
  const double budget = static_cast<double>(options.budget_bytes);
  if (options.units.empty() || options.budget_bytes <= 0) {
    result.why_not = "no candidates";
    return result;
  }
  MEMOPT_ASSIGN_OR_RETURN(StepEffects effects, StepEffects::Create(evaluator, options.base));
  result.evaluations += options.base == nullptr;
  const size_t num_steps = effects.num_steps();  // rows are steps of the base order
  const std::vector<int64_t>& base_peaks = effects.base_peaks();

  // The program's units: the caller's, and the unions inside each small interaction group
  // (plan/program_units.h), each with its effect on every step, kept as runs.
  MEMOPT_ASSIGN_OR_RETURN(ProgramUnits program, BuildProgramUnits(effects, options.units));
  result.evaluations += program.simulations;
  LinkUnits(evaluator.spec_builder(), program);
  // The caller's known plan as program units (a small group's members as the group's union).
  std::vector<char> start_x;
  if (!options.start_units.empty()) {
    start_x.assign(program.plans.size(), 0);
    std::map<int32_t, uint32_t> group_mask;
    for (size_t u : options.start_units) {
      if (u >= options.units.size()) continue;
      const int32_t g = program.group[u];
      if (g < 0) {
        start_x[u] = 1;
      } else {
        group_mask[g] |= program.mask[u];
      }
    }
    for (const auto& [g, m] : group_mask) start_x[static_cast<size_t>(program.group_units[static_cast<size_t>(g)][m])] = 1;
  }
  const size_t num_units = program.plans.size();
  EffectModel model;
  model.num_steps = num_steps;
  model.runs = std::move(program.runs);  // the model owns the effects from here on
  // Costs: a unit of a small group pays all its cloned nodes (at most one unit of the group is
  // chosen); other units share the nodes several of them clone through the y variables.
  CloneCosts clones;
  clones.per_unit.resize(num_units);
  clones.unit_cost.assign(num_units, 0.0);
  {
    std::vector<std::vector<NodeId>> cloned(num_units);
    std::vector<int32_t> cloners(evaluator.num_nodes(), 0);  // ungrouped units cloning each node
    for (size_t u = 0; u < num_units; ++u) {
      cloned[u] = evaluator.ClonedNodes(program.plans[u]);
      clones.unit_cost[u] += evaluator.CopyCostOf(program.plans[u], options.objective);  // never shared
      if (program.group[u] >= 0) continue;
      for (NodeId node : cloned[u]) ++cloners[static_cast<size_t>(node)];
    }
    std::vector<int32_t> index(evaluator.num_nodes(), -1);
    for (size_t u = 0; u < num_units; ++u) {
      for (NodeId node : cloned[u]) {
        const double c = evaluator.NodeCostOf(node, options.objective);
        if (program.group[u] >= 0 || cloners[static_cast<size_t>(node)] == 1) {
          clones.unit_cost[u] += c;
          continue;
        }
        if (index[static_cast<size_t>(node)] < 0) {
          index[static_cast<size_t>(node)] = static_cast<int32_t>(clones.cost.size());
          clones.cost.push_back(c);
        }
        clones.per_unit[u].push_back(index[static_cast<size_t>(node)]);
      }
    }
  }
  // The time limit counts the solves only (the effects above are not limited).
  const auto started = std::chrono::steady_clock::now();
  // Each step's change with every raising unit (worst) and with every lowering one (best).
  const std::vector<double> raise = model.Sum([](size_t, const Run& r) { return r.delta > 0; });
  const std::vector<double> lower = model.Sum([](size_t, const Run& r) { return r.delta < 0; });
  // Effects that interact can make a set save more than its units alone add up to (a clone reading
  // another plan's clone lets both stashes go): where the model says no choice fits a step, its row
  // is calibrated on the exact peaks of every unit applied, so that the program knows that set
  // reaches them (a negative tightening; the exact check corrects any optimism this causes).
  const std::vector<char>& every = program.every;
  PlanEvaluation all;
  if (options.every_unit != nullptr && !options.every_unit->live_at_step.empty()) {
    all = *options.every_unit;
  } else {
    MEMOPT_ASSIGN_OR_RETURN(all, evaluator.Evaluate(PlansOf(program.plans, every), true));
    ++result.evaluations;
  }
  const std::vector<int64_t> all_peaks = effects.StepPeaks(all);
  const std::vector<double> all_change = model.Change(every);
  // When the program fails (its corrections of interacting effects can make it infeasible), every
  // unit, pruned by simulation, is still a plan that fits whenever one exists at all.
  auto every_unit_pruned = [&](const std::string& why) -> Expected<BudgetIlpResult> {
    if (all.peak_bytes > options.budget_bytes) {
      result.why_not = why;
      return result;
    }
    std::vector<char> x = every;
    std::vector<int64_t> peaks = all_peaks;
    PlanEvaluation exact = all;
    MEMOPT_RETURN_IF_ERROR(PruneChosen(evaluator, effects, model, clones, program, options.budget_bytes, x, exact,
                                       peaks, result.evaluations));
    result.feasible = true;
    result.optimal = false;
    result.gap = -1;
    result.note = why + "; every candidate applied, then pruned by simulation";
    result.units = MembersOf(program, x);
    exact.live_at_step.clear();
    exact.step_original.clear();
    result.evaluation = std::move(exact);
    return result;
  };
  std::vector<double> relax(num_steps, 0.0);
  for (size_t n = 0; n < num_steps; ++n) {
    if (static_cast<double>(base_peaks[n]) + lower[n] <= budget) continue;  // the model can fit this step
    relax[n] = std::min(0.0, static_cast<double>(all_peaks[n]) - (static_cast<double>(base_peaks[n]) + all_change[n]));
  }
  // Steps that no choice can push over the budget need no row; one that every choice leaves over
  // it means the program has no solution.
  std::vector<Row> live_rows;
  std::vector<int32_t> live_index(num_steps, -1);
  auto add_row = [&](size_t n) {
    live_index[n] = static_cast<int32_t>(live_rows.size());
    Row row;
    row.step = static_cast<int32_t>(n);
    row.base = static_cast<double>(base_peaks[n]);
    row.tightening = relax[n];
    live_rows.push_back(std::move(row));
  };
  auto activate = [&](Row& row) {
    if (row.active) return;
    row.active = true;
    row.terms = model.Terms(row.step);
  };
  for (size_t n = 0; n < num_steps; ++n) {
    const double base_n = static_cast<double>(base_peaks[n]);
    if (base_n + raise[n] <= budget) continue;
    if (base_n + lower[n] + relax[n] > budget) {
      return every_unit_pruned("no combination of candidates fits the budget at every step (step model)");
    }
    add_row(n);
  }
  if (live_rows.empty()) {
    result.feasible = true;
    result.optimal = true;
    result.evaluation = effects.base();
    result.evaluation.live_at_step.clear();
    result.evaluation.step_original.clear();
    return result;
  }
  // Start with the rows most over the budget.
  std::vector<size_t> by_excess(live_rows.size());
  std::iota(by_excess.begin(), by_excess.end(), 0);
  std::sort(by_excess.begin(), by_excess.end(), [&](size_t a, size_t b) {
    return live_rows[a].base != live_rows[b].base ? live_rows[a].base > live_rows[b].base : a < b;
  });
  for (size_t i = 0; i < by_excess.size() && i < 16; ++i) activate(live_rows[by_excess[i]]);

  constexpr size_t kRowsPerRound = 32;
  for (int repair = 0; repair <= options.max_repairs; ++repair) {
    Solve solve;
    for (int round = 0; round < 200; ++round) {
      const double spent = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      const double root_left = std::max(5.0, 10 * options.time_limit_seconds) - spent;
      if (root_left <= 0) return every_unit_pruned("the integer program ran out of time");
      solve = SolveActive(live_rows, clones, program, budget, std::max(options.time_limit_seconds - spent, 0.05),
                          root_left, start_x);
      ++result.solves;
      if (!solve.solved) return every_unit_pruned("the integer program has no solution");
      // Add the most violated rows; done when none is.
      const std::vector<double> change = model.Change(solve.x);
      std::vector<std::pair<double, size_t>> violated;
      for (size_t r = 0; r < live_rows.size(); ++r) {
        const Row& row = live_rows[r];
        const double over = row.base + change[static_cast<size_t>(row.step)] + row.tightening - budget;
        if (over > 0 && !row.active) violated.emplace_back(over, r);
      }
      if (violated.empty()) break;
      std::sort(violated.begin(), violated.end(), std::greater<>());
      for (size_t i = 0; i < violated.size() && i < kRowsPerRound; ++i) activate(live_rows[violated[i].second]);
    }
    // The exact check: effects that interact can make the true peak higher than the program says.
    MEMOPT_ASSIGN_OR_RETURN(PlanEvaluation exact, evaluator.Evaluate(PlansOf(program.plans, solve.x), true));
    ++result.evaluations;
    std::vector<int64_t> exact_peaks = effects.StepPeaks(exact);
    const std::vector<double> change = model.Change(solve.x);
    if (exact.peak_bytes <= options.budget_bytes) {
      result.model_exact = true;
      for (size_t n = 0; n < num_steps && result.model_exact; ++n) {
        result.model_exact = static_cast<double>(exact_peaks[n]) == static_cast<double>(base_peaks[n]) + change[n];
      }
      result.feasible = true;
      result.optimal = solve.optimal;
      result.gap = solve.gap;
      if (!result.model_exact) {
        // Effects interact (shared clones, chained recomputes): a chosen unit may be unneeded.
        MEMOPT_RETURN_IF_ERROR(PruneChosen(evaluator, effects, model, clones, program, options.budget_bytes,
                                           solve.x, exact, exact_peaks, result.evaluations));
      }
      result.units = MembersOf(program, solve.x);
      exact.live_at_step.clear();
      exact.step_original.clear();
      result.evaluation = std::move(exact);
      return result;
    }
    for (size_t n = 0; n < num_steps; ++n) {
      const double over = static_cast<double>(exact_peaks[n]) - budget;
      if (over <= 0) continue;
      if (live_index[n] < 0) add_row(n);  // a step the model thought safe
      Row& row = live_rows[static_cast<size_t>(live_index[n])];
      const double modelled = row.base + change[n] + row.tightening - budget;
      // The model already saw this step over the budget: the solver accepted it within its
      // feasibility tolerance (GLPK's 1e-7 of the scaled row); ask for that much room.
      row.tightening += over > modelled ? over - modelled : kRowTolerance * budget;
      activate(row);
    }
  }
  return every_unit_pruned("the exact simulation kept exceeding the budget after " +
                           std::to_string(options.max_repairs) + " corrections of the step model");
}

}  // namespace memopt
