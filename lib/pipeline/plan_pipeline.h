// The plan pipeline, from a scanned model (pipeline/load_and_scan.h) to a config: for a level or a
// memory budget, the config, its selection, the rewritten step's exact outcome (checked against
// what the planner predicted) and the report's facts about both. `memopt plan` parses its options
// into a PlanRequest, runs PlanConfig and prints; `memopt apply` shares DescribeRewrite.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "pipeline/load_and_scan.h"
#include "plan/budget_planner.h"
#include "plan/config.h"
#include "plan/plan_evaluator.h"
#include "plan/plan_outcome.h"
#include "plan/selection.h"
#include "report/plan_report.h"
#include "util/bytes.h"

namespace memopt {

struct PlanRequest {
  int level = 1;
  std::optional<SizeSpec> budget;  ///< nullopt: every plan of the level (ORT's levels)
  std::string budget_text;         ///< the budget as the user wrote it, for the report
  PlanObjective objective = PlanObjective::kTime;
  bool integer_program = true;  ///< false: the greedy search alone
  bool target_ort = false;      ///< whole clusters only, as ONNX Runtime 1.19.2 applies a config
  bool splits = true;           ///< also memopt's split model: a plan's clones in groups (not with target_ort)
  /// The budget bounds the footprint (a layout planned from the schedule plus weights and inputs,
  /// analysis/memory_layout.h) instead of the live-bytes peak; a fraction is of the unoptimized
  /// footprint.
  bool budget_of_footprint = false;
};

/// What budget plans (one, or plan --sweep's) choose from and minimise.
struct BudgetSetup {
  PlanEvaluator evaluator;
  BudgetPlanOptions options;  ///< candidates (or groups), objective, planner; no budget yet
};
Expected<BudgetSetup> PrepareBudgetPlanning(const ScannedModel& model, const PlanRequest& request);

/// A planned config and everything known about it. Held behind a pointer: `report.outcome` points
/// at `outcome`.
struct PlannedConfig {
  MemoryOptConfig config;
  std::string config_text;  ///< mem_opt.json
  /// For stderr, in this order: during planning (a fraction of a symbolic peak), then after the
  /// report (the level's and the selection's).
  std::vector<std::string> planning_warnings;
  std::vector<std::string> warnings;
  std::optional<BudgetPlanResult> planned;  ///< budget plans
  Selection selection;
  PlanOutcome outcome;
  PlanReportInput report;  ///< everything but `output`
};

/// Plans `request` on `model`; a budget of concrete bytes on a model with unbound dims is a usage
/// error naming the --dims to add. A budget that cannot be met is not an error here: check
/// `planned->met` (BudgetNotMetError says why).
Expected<std::unique_ptr<PlannedConfig>> PlanConfig(const ScannedModel& model, const PlanRequest& request);

/// The report's facts about a rewrite of `model` by `selection` (graph, scan, dims, matches,
/// outcome, the original's stashed activations, forward FLOPs, and the entries that raise the peak
/// when the plan does).
Status DescribeRewrite(const ScannedModel& model, const Selection& selection, const PlanOutcome& outcome,
                       PlanReportInput* report);

/// The kBudgetNotMet error of a budget plan above its budget: how far over, what is live at its
/// peak, its largest activations and the lowest budget that can be met.
Status BudgetNotMetError(const ScannedModel& model, const PlannedConfig& planned);

}  // namespace memopt
