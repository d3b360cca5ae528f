#include "pipeline/plan_pipeline.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "plan/cost_model.h"

namespace memopt {

namespace {

std::string BytesText(int64_t bytes) { return fmt::format("{} ({} bytes)", HumanBytes(bytes), WithThousands(bytes)); }

std::string LevelMode(int level) {
  return fmt::format("level {} ({})", level,
                     level == 2   ? "every type-1 and type-2 plan, transformer layer boundaries"
                     : level == 1 ? "every type-1 plan, transformer layer boundaries"
                                  : "every type-1 plan of the basic op table");
}

/// The report's budget lines: the budget, the planner's method, result quality and objective.
void DescribeBudgetPlan(const PlanRequest& request, const BudgetSetup& setup, const BudgetPlanResult& planned,
                        int64_t budget, PlanReportInput* report) {
  report->mode = fmt::format("budget, level-{} candidates (least added compute within the budget)", request.level);
  report->budget_bytes = budget;
  report->budget_text = request.budget->is_fraction
                            ? fmt::format("{} of the unoptimized {} = {}", request.budget_text,
                                          request.budget_of_footprint ? "footprint" : "peak", HumanBytes(budget))
                            : fmt::format("{} = {}", request.budget_text, HumanBytes(budget));
  report->budget_met = planned.met;
  report->planner_evaluations = planned.evaluations;
  report->planner_method = std::string(PlanMethodName(planned.method));
  report->planner_quality = DescribeQuality(planned);
  if (QualityOf(planned) != PlanQuality::kNoBound) report->planner_gap = planned.optimal ? 0.0 : planned.gap;
  report->planner_candidates =
      static_cast<int>(request.target_ort ? setup.options.groups.size() : setup.options.candidates.size());
  report->objective = request.objective == PlanObjective::kFlops
                          ? "added FLOPs of the recomputed nodes"
                          : "added compute time of the recomputed nodes on the cost model's roofline (" +
                                DescribeRoofline(CostModel{}) + "; docs/plan.md)";
  report->target = request.target_ort
                       ? "ort (whole clusters: every occurrence of each chosen cluster id, as ONNX Runtime 1.19.2 "
                         "applies a config)"
                       : request.splits ? "memopt (per occurrence, with split recompute: several clones of a value "
                                          "where that pays; memopt apply applies it exactly)"
                                        : "memopt (per occurrence, one clone per value; memopt apply applies it exactly)";
}

/// Plans the budget of `request` into `out` (planned, config, report's budget lines).
Status PlanBudget(const ScannedModel& model, const PlanRequest& request, PlannedConfig* out) {
  const ScanResult& scan = model.scan;
  if (!scan.peak.sized && !request.budget->is_fraction) {
    return UsageError("--budget " + request.budget_text + " needs concrete sizes; bind the dims with --dims " +
                      DimsExample(scan.peak.unbound_dims, &model.loaded.model.graph));
  }
  MEMOPT_ASSIGN_OR_RETURN(BudgetSetup setup, PrepareBudgetPlanning(model, request));
  const bool of_footprint = request.budget_of_footprint;
  if (of_footprint && !scan.peak.sized) {
    return UsageError("--budget-of footprint needs concrete sizes; bind the dims with --dims " +
                      DimsExample(scan.peak.unbound_dims, &model.loaded.model.graph));
  }
  const int64_t reference = of_footprint ? scan.peak.footprint_bytes : scan.peak.peak_bytes;
  const int64_t budget = request.budget->is_fraction
                             ? static_cast<int64_t>(std::llround(request.budget->fraction * reference))
                             : request.budget->bytes;
  // A footprint budget: the planner plans live bytes, and the live budget comes down to the plan's
  // peak less what its layout exceeds the budget by, until the layout fits (the layout's holes
  // change little from one plan to the next; at most five plans).
  int64_t live_budget = budget;
  for (int round = 0;; ++round) {
    setup.options.budget_bytes = live_budget;
    auto result = PlanForBudget(setup.evaluator, setup.options);
    if (!result.ok()) return result.status().WithContext(model.name);
    out->planned = std::move(result).value();
    if (!of_footprint || !out->planned->met) break;
    auto outcome = EvaluatePlanExactly(model.graph(), scan, out->planned->plans, model.dims);
    if (!outcome.ok()) return outcome.status().WithContext(model.name);
    const int64_t footprint = outcome->peak.footprint_bytes;
    if (footprint <= budget) break;
    if (round == 4) {
      out->planned->met = false;
      break;
    }
    // Below this plan's own peak, or the planner returns the same plan.
    live_budget = std::min(live_budget, outcome->peak.peak_bytes) - (footprint - budget);
  }
  out->config = ConfigForPlans(setup.evaluator.spec_builder(), out->planned->plans);
  DescribeBudgetPlan(request, setup, *out->planned, budget, &out->report);
  if (of_footprint && !request.budget->is_fraction) out->report.budget_text += " of the footprint (planned layout)";
  if (!scan.peak.sized) {
    out->planning_warnings.emplace_back(
        "the budget is a fraction of a peak computed with unbound dims set to 1024; bind them with --dims");
  }
  return Status::Ok();
}

}  // namespace

Expected<BudgetSetup> PrepareBudgetPlanning(const ScannedModel& model, const PlanRequest& request) {
  auto evaluator = PlanEvaluator::Create(model.graph(), model.scan, model.dims);
  if (!evaluator.ok()) return evaluator.status().WithContext(model.name);
  BudgetSetup setup{std::move(evaluator).value(), {}};
  setup.options.candidates = BudgetCandidates(model.scan, request.level, setup.evaluator.spec_builder());
  setup.options.objective = request.objective;
  if (request.target_ort) {
    setup.options.groups = WholeClusterGroups(model.scan, setup.options.candidates);
  } else if (request.splits) {
    setup.options.candidates = WithSplits(setup.evaluator.spec_builder(), setup.options.candidates);
  }
  setup.options.integer_program = request.integer_program;
  return setup;
}

Expected<std::unique_ptr<PlannedConfig>> PlanConfig(const ScannedModel& model, const PlanRequest& request) {
  auto out = std::make_unique<PlannedConfig>();
  const Graph& graph = model.graph();
  if (!request.budget) {
    out->config = LevelConfig(model.scan, &out->warnings);
    out->report.mode = LevelMode(request.level);
  } else {
    MEMOPT_RETURN_IF_ERROR(PlanBudget(model, request, out.get()));
  }
  const RewriteSpecBuilder builder(graph, model.scan);
  SelectionOptions select;
  select.builder = &builder;
  auto selection = SelectPlans(model.scan, out->config, select);
  if (!selection.ok()) return selection.status().WithContext("internal config");
  out->selection = std::move(selection).value();
  if (out->planned && out->selection.plans != out->planned->plans) {
    return InternalError(fmt::format("the written config [{}] selects plans [{}], not the planned [{}]",
                                     fmt::join(ConfigLines(out->config), ", "), fmt::join(out->selection.plans, ","),
                                     fmt::join(out->planned->plans, ",")));
  }
  auto outcome = EvaluatePlanExactly(graph, model.scan, out->selection.plans, model.dims);
  if (!outcome.ok()) return outcome.status().WithContext(model.name);
  out->outcome = std::move(outcome).value();
  if (out->planned && out->outcome.peak.peak_bytes != out->planned->evaluation.peak_bytes) {
    return InternalError(fmt::format("planner peak {} differs from the rewritten graph's peak {}",
                                     out->planned->evaluation.peak_bytes, out->outcome.peak.peak_bytes));
  }
  out->config_text = WriteMemoryOptConfig(out->config);
  for (const std::string& w : out->selection.warnings) out->warnings.push_back(w);

  PlanReportInput& report = out->report;
  report.command = "plan";
  report.config = ConfigLines(out->config);
  MEMOPT_RETURN_IF_ERROR(DescribeRewrite(model, out->selection, out->outcome, &report));
  return out;
}

Status DescribeRewrite(const ScannedModel& model, const Selection& selection, const PlanOutcome& outcome,
                       PlanReportInput* report) {
  const Graph& graph = model.graph();
  const ScanResult& scan = model.scan;
  report->model_name = model.name;
  report->graph = &graph;
  report->scan = &scan;
  report->level = model.options.level;
  report->dims = model.dims;
  report->matches = selection.matches;
  report->outcome = &outcome;
  report->original_stashed = StashedActivations(graph, scan.order, scan.boundary, model.dims);
  report->forward_flops = 0;
  for (const Node& node : graph.nodes) {
    if (scan.order.IsForward(node.id)) report->forward_flops += EstimateNodeCost(graph, node, model.dims).flops;
  }
  if (RaisesPeak(*report) == true) {
    auto raisers = FindPeakRaisers(graph, scan, selection.plans, model.dims);
    if (!raisers.ok()) return raisers.status().WithContext(model.name);
    report->peak_raisers = std::move(raisers).value();
  }
  return Status::Ok();
}

Status BudgetNotMetError(const ScannedModel& model, const PlannedConfig& planned) {
  const Graph& graph = model.graph();
  const PlanOutcome& best = planned.outcome;
  const Graph& g = best.rewritten.graph;
  const PeakEstimate& p = best.peak;
  const int64_t budget = *planned.report.budget_bytes;
  const int64_t lowest_peak = std::min(planned.planned->all_candidates.peak_bytes, planned.planned->evaluation.peak_bytes);
  std::string where = p.peak_node == kNone
                          ? std::string()
                          : fmt::format(" at node '{}' ({}, {})", g.node(p.peak_node).name, g.node(p.peak_node).op_type,
                                        p.peak_position <= best.rewritten.order.last_forward ? "forward" : "backward");
  if (planned.report.budget_text.find(" footprint") != std::string::npos && p.sized && p.peak_bytes <= budget) {
    return Status(ErrorCode::kBudgetNotMet,
                  fmt::format("the footprint budget {} cannot be met: the best plan found peaks at {} but its planned "
                              "layout needs {}; give a larger budget, or plan the live peak (--budget-of live)",
                              BytesText(budget), BytesText(p.peak_bytes), BytesText(p.footprint_bytes)));
  }
  std::string out = fmt::format("the budget {} cannot be met: the best plan found reaches {}{}, {} over the budget",
                                BytesText(budget), BytesText(p.peak_bytes), where, HumanBytes(p.peak_bytes - budget));
  std::vector<LiveValue> live = LiveAt(g, best.rewritten.order, p.peak_position, model.dims);
  int64_t fixed = 0, activations = 0;
  for (const LiveValue& v : live) (v.always_live ? fixed : activations) += v.bytes;
  out += fmt::format("; live there: weights and graph inputs {}, activations {}", HumanBytes(fixed),
                     HumanBytes(activations));
  std::vector<std::string> largest;
  for (const LiveValue& v : live) {
    if (v.always_live) continue;
    std::string why = "a tensor of this step";
    // Original values keep their ids in the rewritten graph.
    if (static_cast<size_t>(v.value) < graph.values.size()) {
      const NodeId producer = graph.value(v.value).producer;
      for (const RejectedCandidate& rc : model.scan.rejected) {
        if (rc.node == producer) why = "stashed: " + rc.reason;
      }
    } else {
      why = "recomputed";
    }
    largest.push_back(fmt::format("'{}' {} ({})", g.value(v.value).name, HumanBytes(v.bytes), why));
    if (largest.size() == 3) break;
  }
  if (!largest.empty()) {
    out += "; largest activations:";
    for (size_t i = 0; i < largest.size(); ++i) out += (i ? ", " : " ") + largest[i];
  }
  out += fmt::format("; it would take a budget of at least {}", BytesText(std::min(lowest_peak, p.peak_bytes)));
  if (fixed > budget) out += " (weights and graph inputs alone exceed the budget)";
  return Status(ErrorCode::kBudgetNotMet, out);
}

}  // namespace memopt
