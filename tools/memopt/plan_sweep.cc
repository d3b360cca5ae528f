#include "plan_sweep.h"

#include <cstdio>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli.h"
#include "plan/budget_sweep.h"
#include "plan/layer_checkpoint.h"
#include "report/plan_report.h"
#include "plan/selection.h"
#include "report/sweep_plot.h"
#include "util/bytes.h"

namespace memopt::cli {
namespace {

/// The graph scanned as ORT scans it at `level` (its built-in table, the level's defaults).
Expected<ScanResult> OrtScan(const SweepRequest& r, int level) {
  ScanOptions options = r.scan_options;
  options.level = level;
  options.op_table = nullptr;
  options.probe_level = -1;
  options.layer_boundary.reset();
  return Scan(*r.graph, options);
}

/// Every plan of an ORT level (`scan` from OrtScan), evaluated on the same graph.
Expected<SweepPoint> LevelReference(const SweepRequest& r, const ScanResult& scan, int level) {
  MEMOPT_ASSIGN_OR_RETURN(PlanEvaluator ev, PlanEvaluator::Create(*r.graph, scan, r.dims));
  MEMOPT_ASSIGN_OR_RETURN(Selection sel, SelectPlans(scan, LevelConfig(scan)));
  std::vector<size_t> plans;
  for (size_t p : sel.plans) {
    if (ev.spec_builder().Supported(p)) plans.push_back(p);
  }
  MEMOPT_ASSIGN_OR_RETURN(PlanEvaluation e, ev.Evaluate(plans));
  return ReferencePoint(fmt::format("ORT level {}", level), e);
}

/// Per-block checkpointing (plan/layer_checkpoint.h) on ORT's level-1 scan; nullopt without
/// transformer layers.
Expected<std::optional<SweepPoint>> CheckpointReference(const SweepRequest& r, const ScanResult& level1) {
  const ScanResult layers = LayerCheckpointScan(*r.graph, level1);
  if (layers.plans.empty()) return std::optional<SweepPoint>();
  MEMOPT_ASSIGN_OR_RETURN(PlanEvaluator ev, PlanEvaluator::Create(*r.graph, layers, r.dims));
  std::vector<size_t> plans;
  for (size_t p = 0; p < layers.plans.size(); ++p) {
    if (ev.spec_builder().Supported(p)) plans.push_back(p);
  }
  MEMOPT_ASSIGN_OR_RETURN(PlanEvaluation e, ev.Evaluate(plans));
  return std::optional<SweepPoint>(ReferencePoint("per-block checkpointing", e));
}

std::string Percent(int64_t part, int64_t whole) {
  return whole > 0 ? fmt::format("{:.1f}%", 100.0 * static_cast<double>(part) / static_cast<double>(whole)) : "-";
}

std::string Render(const SweepRequest& r, const SweepResult& sweep, const std::vector<SweepPoint>& refs) {
  const bool flops = r.plan.objective == PlanObjective::kFlops;
  if (r.format == OutputFormat::kJson) {
    nlohmann::ordered_json j;
    j["schema_version"] = 1;
    j["command"] = "plan --sweep";
    j["model"] = r.model_name;
    j["objective"] = flops ? "flops" : "time";
    j["unoptimized_peak"] = sweep.unoptimized_peak;
    j["lowest_peak"] = sweep.lowest_peak;
    j["forward_flops"] = sweep.forward_flops;
    auto point = [](const SweepPoint& p) {
      nlohmann::ordered_json o;
      o["label"] = p.label;
      o["budget"] = p.budget_bytes > 0 ? nlohmann::ordered_json(p.budget_bytes) : nlohmann::ordered_json(nullptr);
      o["met"] = p.met;
      o["peak"] = p.peak_bytes;
      o["added_seconds_estimate"] = p.added_seconds;
      o["added_flops"] = p.added_flops;
      o["nodes_added"] = p.nodes_added;
      o["optimality"] = p.optimality.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(p.optimality);
      return o;
    };
    j["points"] = nlohmann::ordered_json::array();
    for (const SweepPoint& p : sweep.points) j["points"].push_back(point(p));
    j["references"] = nlohmann::ordered_json::array();
    for (const SweepPoint& p : refs) j["references"].push_back(point(p));
    return j.dump(2) + "\n";
  }
  TextTable table({"Point", "Budget", "Peak", "vs unoptimized", "Added compute", "Added FLOPs (% of forward)",
                   "Clones", "Planner"});
  auto row = [&](const SweepPoint& p) {
    table.AddRow({p.label, p.budget_bytes > 0 ? HumanBytes(p.budget_bytes) + (p.met ? "" : " (not met)") : "-",
                  HumanBytes(p.peak_bytes), Percent(p.peak_bytes - sweep.unoptimized_peak, sweep.unoptimized_peak),
                  HumanSeconds(p.added_seconds),
                  fmt::format("{} ({})", HumanFlops(p.added_flops), Percent(p.added_flops, sweep.forward_flops)),
                  std::to_string(p.nodes_added), p.optimality.empty() ? "-" : p.optimality});
  };
  for (const SweepPoint& p : sweep.points) row(p);
  for (const SweepPoint& p : refs) row(p);
  std::string out;
  if (r.format == OutputFormat::kTable && sweep.points.size() == 1) {
    out += fmt::format("Model: {} ({} nodes)\nSweep: nothing to reduce: no recompute plan lowers the unoptimized peak "
                       "{}\n\n",
                       r.model_name, r.graph->nodes.size(), HumanBytes(sweep.unoptimized_peak));
  } else if (r.format == OutputFormat::kTable) {
    out += fmt::format("Model: {} ({} nodes)\nSweep: {} budgets from the unoptimized peak {} down to the lowest "
                       "reachable peak {}; minimised: {}\n\n",
                       r.model_name, r.graph->nodes.size(), sweep.points.size(), HumanBytes(sweep.unoptimized_peak),
                       HumanBytes(sweep.lowest_peak),
                       flops ? "added FLOPs" : "added compute time of the recomputed nodes (cost model)");
  }
  out += table.Render(r.format);
  return out;
}

}  // namespace

int RunPlanSweep(const SweepRequest& r, int verbosity) {
  if (!r.scan->peak.sized) {
    return ReportError(
        UsageError("--sweep needs concrete sizes; bind the dims with --dims " + DimsExample(r.scan->peak.unbound_dims)));
  }
  SweepOptions options;
  options.plan = r.plan;
  options.points = r.points;
  auto sweep = SweepBudgets(*r.evaluator, options);
  if (!sweep.ok()) return ReportError(sweep.status().WithContext(r.model_name));
  auto level1 = OrtScan(r, 1);
  if (!level1.ok()) return ReportError(level1.status().WithContext(r.model_name));
  auto level2 = OrtScan(r, 2);
  if (!level2.ok()) return ReportError(level2.status().WithContext(r.model_name));
  std::vector<SweepPoint> refs;
  for (const auto& [scan, level] : {std::pair(&*level1, 1), std::pair(&*level2, 2)}) {
    auto ref = LevelReference(r, *scan, level);
    if (!ref.ok()) return ReportError(ref.status().WithContext(r.model_name));
    refs.push_back(*ref);
  }
  auto layers = CheckpointReference(r, *level1);
  if (!layers.ok()) return ReportError(layers.status().WithContext(r.model_name));
  if (*layers) refs.push_back(**layers);

  if (!r.plot.empty()) {
    const size_t slash = r.model_name.find_last_of('/');
    const std::string title = slash == std::string::npos ? r.model_name : r.model_name.substr(slash + 1);
    SweepPlotInput plot{title, &*sweep, refs, r.plan.objective == PlanObjective::kFlops};
    Status written = WriteOutput(r.plot, r.plot_svg ? RenderSweepSvg(plot) : RenderSweepHtml(plot), r.model_name);
    if (!written.ok()) return ReportError(written);
  }
  Status written = WriteOutput(r.output, Render(r, *sweep, refs), r.model_name);
  if (!written.ok()) return ReportError(written);
  if (verbosity >= 0 && !r.output.empty()) std::fprintf(stderr, "memopt: wrote %s\n", r.output.c_str());
  return 0;
}

}  // namespace memopt::cli
