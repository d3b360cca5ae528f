#include "plan/program_units.h"

#include <algorithm>
#include <atomic>
#include <numeric>
#include <thread>
#include <map>
#include <unordered_map>

#include "rewrite/rewrite_spec.h"

namespace memopt {
namespace {

/// Effects (and keys) of `sets`, computed on every core; each worker writes its own entries, so
/// the result does not depend on the thread count.
Status ComputeEffects(const StepEffects& effects, const std::vector<std::vector<size_t>>& sets,
                      std::vector<std::vector<StepRun>>& runs, std::vector<std::vector<int64_t>>* keys,
                      int& simulations) {
  const size_t n = sets.size();
  runs.assign(n, {});
  if (keys != nullptr) keys->assign(n, {});
  std::vector<Status> failures(n);
  std::vector<char> simulated(n, 0);
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i = next++; i < n; i = next++) {
      bool full = false;
      Expected<std::vector<StepRun>> r = effects.EffectOf(sets[i], &full, keys != nullptr ? &(*keys)[i] : nullptr);
      simulated[i] = full;
      if (!r.ok()) {
        failures[i] = r.status();
        continue;
      }
      runs[i] = std::move(*r);
    }
  };
  const size_t threads = std::max<size_t>(1, std::min<size_t>(std::thread::hardware_concurrency(), n / 8));
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();
  for (size_t i = 0; i < n; ++i) {
    MEMOPT_RETURN_IF_ERROR(failures[i]);
    simulations += simulated[i];
  }
  return Status::Ok();
}

/// Largest interaction group whose unions are enumerated (masks are 32-bit).
constexpr size_t kMaxGroup = 16;

size_t Find(std::vector<size_t>& parent, size_t x) {
  while (parent[x] != x) x = parent[x] = parent[parent[x]];
  return x;
}

}  // namespace

Expected<ProgramUnits> BuildProgramUnits(const StepEffects& effects, const std::vector<std::vector<size_t>>& units,
                                         size_t max_unions) {
  ProgramUnits out;
  const size_t n = units.size();
  std::vector<std::vector<int64_t>> keys;
  MEMOPT_RETURN_IF_ERROR(ComputeEffects(effects, units, out.runs, &keys, out.simulations));
  out.plans = units;
  out.members.resize(n);
  for (size_t u = 0; u < n; ++u) out.members[u] = {u};
  out.group.assign(n, -1);
  out.mask.assign(n, 0);

  // Interaction groups: units sharing a key.
  std::vector<size_t> parent(n);
  std::iota(parent.begin(), parent.end(), 0);
  std::unordered_map<int64_t, size_t> first;
  for (size_t u = 0; u < n; ++u) {
    for (int64_t k : keys[u]) {
      auto [it, inserted] = first.emplace(k, u);
      if (!inserted) parent[Find(parent, u)] = Find(parent, it->second);
    }
  }
  std::vector<std::vector<size_t>> groups;
  {
    std::unordered_map<size_t, size_t> index;
    for (size_t u = 0; u < n; ++u) {
      auto [it, inserted] = index.emplace(Find(parent, u), groups.size());
      if (inserted) groups.emplace_back();
      groups[it->second].push_back(u);
    }
  }
  // Unions of 2+ units of each small group.
  std::vector<std::vector<size_t>> unions;
  std::vector<std::pair<size_t, uint32_t>> origin;  // (group, mask) per union
  out.every.assign(n, 1);
  // Smallest groups first, while the unions fit `max_unions` (2^k - 1 - k for a group of k).
  std::vector<size_t> by_size(groups.size());
  std::iota(by_size.begin(), by_size.end(), 0);
  std::stable_sort(by_size.begin(), by_size.end(), [&](size_t a, size_t b) { return groups[a].size() < groups[b].size(); });
  size_t budget = max_unions;
  for (size_t gi : by_size) {
    const std::vector<size_t>& g = groups[gi];
    if (g.size() < 2 || g.size() > kMaxGroup) continue;
    const size_t needed = (size_t{1} << g.size()) - 1 - g.size();
    if (needed > budget) break;
    budget -= needed;
    const int32_t id = static_cast<int32_t>(out.group_units.size());
    out.group_units.emplace_back(size_t{1} << g.size(), -1);
    for (size_t i = 0; i < g.size(); ++i) {
      out.group[g[i]] = id;
      out.mask[g[i]] = 1u << i;
      out.group_units.back()[size_t{1} << i] = static_cast<int32_t>(g[i]);
      out.every[g[i]] = 0;
    }
    for (uint32_t m = 1; m < (1u << g.size()); ++m) {
      if ((m & (m - 1)) == 0) continue;  // single units exist already
      std::vector<size_t> chosen;
      for (size_t i = 0; i < g.size(); ++i) {
        if (m & (1u << i)) chosen.push_back(g[i]);
      }
      std::vector<size_t> plans;
      for (size_t u : chosen) plans.insert(plans.end(), units[u].begin(), units[u].end());
      std::sort(plans.begin(), plans.end());
      plans.erase(std::unique(plans.begin(), plans.end()), plans.end());
      unions.push_back(std::move(plans));
      origin.emplace_back(static_cast<size_t>(id), m);
      out.members.push_back(std::move(chosen));
    }
  }
  std::vector<std::vector<StepRun>> union_runs;
  MEMOPT_RETURN_IF_ERROR(ComputeEffects(effects, unions, union_runs, nullptr, out.simulations));
  for (size_t i = 0; i < unions.size(); ++i) {
    const auto [id, m] = origin[i];
    const int32_t unit = static_cast<int32_t>(out.plans.size());
    out.plans.push_back(std::move(unions[i]));
    out.runs.push_back(std::move(union_runs[i]));
    out.group.push_back(static_cast<int32_t>(id));
    out.mask.push_back(m);
    out.group_units[id][m] = unit;
    out.every.push_back(m == out.group_units[id].size() - 1);
  }
  return out;
}

std::vector<StepRun> SubtractRuns(const std::vector<StepRun>& a, const std::vector<StepRun>& b) {
  std::map<int32_t, int64_t> step;  // position -> change of the difference there
  for (const StepRun& r : a) {
    step[r.begin] += r.delta;
    step[r.end] -= r.delta;
  }
  for (const StepRun& r : b) {
    step[r.begin] -= r.delta;
    step[r.end] += r.delta;
  }
  std::vector<StepRun> out;
  int64_t level = 0;
  int32_t from = 0;
  for (const auto& [pos, d] : step) {
    if (level != 0 && pos > from) {
      if (!out.empty() && out.back().end == from && out.back().delta == level) {
        out.back().end = pos;
      } else {
        out.push_back({from, pos, level});
      }
    }
    level += d;
    from = pos;
  }
  return out;
}

void LinkUnits(const RewriteSpecBuilder& builder, ProgramUnits& program) {
  // The single ungrouped units of one plan each, by plan.
  std::unordered_map<size_t, int32_t> unit_of;
  for (size_t u = 0; u < program.plans.size(); ++u) {
    if (program.group[u] < 0 && program.plans[u].size() == 1 && program.members[u].size() == 1) {
      unit_of.emplace(program.plans[u][0], static_cast<int32_t>(u));
    }
  }
  auto unit = [&](size_t plan) {
    auto it = unit_of.find(plan);
    return it == unit_of.end() ? -1 : it->second;
  };
  std::map<size_t, std::vector<int32_t>> keeps_of;  // plan -> its keep units (ascending plan index)
  std::map<NodeId, std::vector<int32_t>> by_entry;  // entry node -> its plans' units
  for (const auto& [plan, u] : unit_of) {
    const size_t base = builder.BasePlan(plan);
    if (!builder.IsVariant(plan)) {
      by_entry[builder.scan().plans[plan].entry].push_back(u);
      continue;
    }
    const int32_t b = unit(base);
    if (b < 0) continue;
    program.runs[static_cast<size_t>(u)] = SubtractRuns(program.runs[static_cast<size_t>(u)], program.runs[static_cast<size_t>(b)]);
    program.implied.emplace_back(u, b);
    if (builder.IsKeep(plan)) keeps_of[base].push_back(u);
  }
  for (auto& [base, keeps] : keeps_of) {
    std::sort(keeps.begin(), keeps.end(), [&](int32_t a, int32_t b) { return program.plans[a][0] < program.plans[b][0]; });
    if (keeps.size() > 1) program.at_most_one.push_back(keeps);
    for (int32_t k : keeps) {
      const int32_t j = builder.SplitReader(program.plans[static_cast<size_t>(k)][0]);
      for (int32_t i = 1; i <= j; ++i) {
        const int32_t s = unit(static_cast<size_t>(builder.SplitIndex(base, i)));
        if (s >= 0) program.at_most_one.push_back({k, s});
      }
    }
  }
  for (auto& [entry, units] : by_entry) {
    if (units.size() < 2) continue;
    std::sort(units.begin(), units.end());
    program.at_most_one.push_back(units);
  }
  std::sort(program.implied.begin(), program.implied.end());
}

}  // namespace memopt
