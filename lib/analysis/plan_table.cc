#include "analysis/plan_table.h"

#include <algorithm>
#include <map>
#include <utility>

namespace memopt {

std::string PlanConfig(const RecomputePlan& plan) {
  return plan.cluster_id + ":" + std::to_string(plan.type()) + ":-1";
}

void ComputePlanSavings(std::vector<RecomputePlan>& plans) {
  for (RecomputePlan& plan : plans) {
    std::optional<SymExpr> total = SymExpr(0);
    for (const StashedOutput& out : plan.outputs) {
      if (!out.bytes.has_value()) {
        total.reset();
        break;
      }
      *total += out.bytes->Scaled(plan.save_ratio);
    }
    plan.saving = std::move(total);
  }
}

std::vector<PlanGroup> BuildPlanGroups(const std::vector<RecomputePlan>& plans, const ExecutionOrder& order,
                                       int level, const DimBindings& dims) {
  std::map<std::string, PlanGroup> by_config;
  for (size_t i = 0; i < plans.size(); ++i) {
    const RecomputePlan& plan = plans[i];
    if (plan.type() == 2 && level < 2) continue;
    std::string config = PlanConfig(plan);
    auto [it, inserted] = by_config.try_emplace(config);
    PlanGroup& group = it->second;
    if (inserted) {
      group.config = config;
      group.cluster_id = plan.cluster_id;
      group.type = plan.type();
      group.saving = SymExpr(0);
    }
    ++group.freq;
    group.plans.push_back(i);
    if (group.saving.has_value() && plan.saving.has_value()) {
      *group.saving += *plan.saving;
    } else {
      group.saving.reset();
    }
  }

  std::vector<std::pair<double, PlanGroup>> keyed;
  for (auto& [config, group] : by_config) {
    std::sort(group.plans.begin(), group.plans.end(), [&](size_t a, size_t b) {
      return order.position[plans[a].entry] < order.position[plans[b].entry];
    });
    double key = 0;
    if (group.saving.has_value()) {
      Expected<Rational> exact = group.saving->Evaluate(dims);
      if (exact.ok() && !exact->overflow) group.saving_bytes = exact->num / exact->den;
      std::optional<Rational> approx = EvaluateWithDefault(*group.saving, dims, kUnboundDimForOrdering);
      if (approx.has_value() && !approx->overflow) key = approx->ToDouble();
    }
    keyed.emplace_back(key, std::move(group));
  }
  std::stable_sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) {
    if (a.first != b.first) return a.first > b.first;
    return a.second.config < b.second.config;
  });
  std::vector<PlanGroup> groups;
  groups.reserve(keyed.size());
  for (auto& [key, group] : keyed) groups.push_back(std::move(group));
  return groups;
}

}  // namespace memopt
