// memopt plan MODEL: write a memory-optimizer config (ORT's mem_opt.json format) for a level
// (every type-1 plan, or type-1 and type-2 plans) or for a memory budget, with a before/after
// report of the rewritten training step.
#include <cmath>
#include <cstdio>
#include <set>

#include <fmt/format.h>

#include "cli.h"
#include "io/temp_file.h"
#include "gates.h"
#include "plan_sweep.h"
#include "pipeline/plan_pipeline.h"
#include "report/timeline_render.h"
#include "timeline_output.h"
#include "util/bytes.h"

namespace memopt::cli {

namespace {

struct PlanArgs {
  std::string model;
  std::string ops = "ort";
  std::string op_table;
  std::string dims;
  int level = 1;
  std::string budget;
  std::string output;
  std::string format = "table";
  std::string boundary;
  std::string timeline;
  std::string objective = "time";
  std::string target = "memopt";
  std::string splits = "on";
  std::string checkpoints = "on";
  std::string budget_of = "live";
  std::string planner = "ilp";
  bool sweep = false;
  int sweep_points = 10;
  std::string plot;
  GateOptions gates;
};

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() > suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}
bool PlotIsSvg(const std::string& plot) { return EndsWith(plot, ".svg"); }

/// The usage errors of plan's options, found before anything is loaded; fills the output format
/// and the plan request.
Status CheckPlanArgs(const PlanArgs& args, bool budget_mode, OutputFormat* format, PlanRequest* request) {
  if (args.timeline == "-" && args.output == "-") {
    return UsageError("-o - and --timeline - both want stdout; give one of them a file name");
  }
  if (!args.timeline.empty()) MEMOPT_RETURN_IF_ERROR(TimelineFormatForPath(args.timeline).status());
  if (!ParseOutputFormat(args.format, format)) {
    return UsageError("unknown --format '" + args.format + "'; use table, json, csv or markdown");
  }
  MEMOPT_RETURN_IF_ERROR(ValidateGateOptions(args.gates));
  if (args.objective != "time" && args.objective != "flops") {
    return UsageError("unknown --objective '" + args.objective + "'; use time or flops");
  }
  if (args.planner != "ilp" && args.planner != "greedy") {
    return UsageError("unknown --planner '" + args.planner + "'; use ilp or greedy");
  }
  if (args.target != "memopt" && args.target != "ort") {
    return UsageError("unknown --target '" + args.target + "'; use memopt or ort");
  }
  if (args.splits != "on" && args.splits != "off") {
    return UsageError("unknown --splits '" + args.splits + "'; use on or off");
  }
  if (args.checkpoints != "on" && args.checkpoints != "off") {
    return UsageError("unknown --checkpoints '" + args.checkpoints + "'; use on or off");
  }
  if (args.budget_of != "live" && args.budget_of != "footprint") {
    return UsageError("unknown --budget-of '" + args.budget_of + "'; use live or footprint");
  }
  if (args.budget_of == "footprint" && args.budget.empty()) {
    return UsageError("--budget-of footprint sets what --budget bounds; add --budget");
  }
  if (args.sweep && !args.budget.empty()) return UsageError("--sweep plans its own budgets; drop --budget");
  if (!args.plot.empty() && !args.sweep) return UsageError("--plot draws the --sweep frontier; add --sweep");
  if (!args.plot.empty() && !PlotIsSvg(args.plot) && !EndsWith(args.plot, ".html")) {
    return UsageError("--plot " + args.plot + ": give a FILE.html or FILE.svg");
  }
  if (args.sweep && !args.timeline.empty()) return UsageError("--timeline draws one plan; not with --sweep");
  if (args.sweep && args.gates.any()) {
    return UsageError("--fail-above and --baseline gate one plan's peak; not with --sweep");
  }
  if (args.target == "ort" && args.ops == "extended") {
    return UsageError("--target ort plans what ONNX Runtime 1.19.2 applies, and it does not know memopt's "
                      "extended ops; use --ops ort with --target ort");
  }
  if (!args.output.empty()) MEMOPT_RETURN_IF_ERROR(io::CheckOutputPath(args.output, args.model));
  request->level = args.level;
  if (budget_mode) {
    auto spec = ParseSize(args.budget);
    if (!spec.ok()) return spec.status().WithContext("--budget");
    request->budget = *spec;
    request->budget_text = args.budget;
  }
  request->objective = args.objective == "flops" ? PlanObjective::kFlops : PlanObjective::kTime;
  request->integer_program = args.planner == "ilp";
  request->target_ort = args.target == "ort";
  request->splits = args.splits == "on";
  request->budget_of_footprint = args.budget_of == "footprint";
  return Status::Ok();
}

/// plan --sweep: budgets from the unoptimized peak down, with the references beside them.
int RunSweep(const PlanArgs& args, const ScannedModel& model, const PlanRequest& plan_request, OutputFormat format,
             const GlobalOptions& globals) {
  auto setup = PrepareBudgetPlanning(model, plan_request);
  if (!setup.ok()) return ReportError(setup.status());
  SweepRequest request;
  request.model_name = args.model;
  request.graph = &model.graph();
  request.scan = &model.scan;
  request.evaluator = &setup->evaluator;
  request.scan_options = model.options;
  request.dims = model.dims;
  request.plan = setup->options;
  request.points = args.sweep_points;
  request.plot = args.plot;
  request.plot_svg = PlotIsSvg(args.plot);
  request.format = format;
  request.output = args.output;
  return RunPlanSweep(request, globals.verbosity);
}

/// Where the written config will go wrong: ONNX Runtime ignores single-occurrence selectors and
/// the ids of memopt's extended ops.
void WarnAboutConfig(const PlanArgs& args, const MemoryOptConfig& config, const GlobalOptions& globals) {
  if (args.output.empty() || globals.verbosity < 0) return;
  if (!config.selectors.empty()) {
    PrintWarning("the config selects single occurrences (" + config.selectors.front().text +
                 (config.selectors.size() > 1 ? ", ..." : "") +
                 "): `memopt apply` applies it as planned, but ONNX Runtime 1.19.2 ignores those entries and "
                 "recomputes every occurrence of each listed cluster, which gives another peak; plan with "
                 "--target ort for a config ORT applies as predicted");
  }
  if (args.ops != "extended") return;
  std::vector<std::string> extended_ids;
  for (const ConfigEntry& e : config.entries) {
    if (ClusterNeedsExtendedOps(e.cluster_id)) extended_ids.push_back(e.cluster_id);
  }
  if (!extended_ids.empty()) {
    PrintWarning("the config recomputes ops of memopt's extended table (" + extended_ids.front() +
                 (extended_ids.size() > 1 ? ", ..." : "") +
                 "): apply it with `memopt apply --ops extended`; ONNX Runtime 1.19.2 ignores those entries");
  }
}

/// Writes -o and --timeline, then prints the report (stdout carries one thing: the SVG of
/// --timeline -, the config of -o -, or else the report).
Status WritePlanOutputs(const PlanArgs& args, const ScannedModel& model, PlannedConfig& planned, OutputFormat format) {
  if (!args.output.empty()) MEMOPT_RETURN_IF_ERROR(WriteOutput(args.output, planned.config_text, args.model));
  planned.report.output = args.output;
  if (!args.timeline.empty()) {
    RewriteTimelineRequest request;
    request.path = args.timeline;
    request.model_path = args.model;
    request.command = "plan";
    request.mode = planned.planned ? "budget " + args.budget : fmt::format("level {}", args.level);
    MEMOPT_RETURN_IF_ERROR(WriteRewriteTimeline(request, model.graph(), model.scan, planned.outcome.rewritten.graph,
                                                planned.outcome.rewritten.order, model.dims));
    if (args.timeline != "-") PrintInfo(1, "wrote the timeline to " + args.timeline);
  }
  std::string text;
  if (format == OutputFormat::kJson) {
    text = PlanToJson(planned.report).dump(2) + "\n";
  } else {
    text = RenderPlanText(planned.report, format);
    if (args.output.empty() && format == OutputFormat::kTable) text += "\nConfig (mem_opt.json):\n" + planned.config_text;
  }
  PrintReport(text, args.timeline == "-" || args.output == "-");
  return Status::Ok();
}

int RunPlan(const PlanArgs& args, const GlobalOptions& globals, bool budget_mode) {
  OutputFormat format;
  PlanRequest plan_request;
  if (Status usage = CheckPlanArgs(args, budget_mode, &format, &plan_request); !usage.ok()) return ReportError(usage);
  if (!budget_mode && (args.objective != "time" || args.planner != "ilp") && globals.verbosity >= 0) {
    PrintWarning("--objective and --planner apply to --budget plans only; a --level plan takes every plan of the level");
  }
  // memopt's model adds the per-block checkpoint plans to the budget planner's candidates.
  const bool checkpoints = (budget_mode || args.sweep) && args.target == "memopt" && args.checkpoints == "on";
  auto model =
      LoadAndScan({args.model, args.dims, args.ops, args.op_table, args.level, args.boundary, checkpoints});
  if (!model.ok()) return ReportError(model.status());
  if (args.sweep) return RunSweep(args, **model, plan_request, format, globals);

  auto planned = PlanConfig(**model, plan_request);
  if (!planned.ok()) return ReportError(planned.status());
  PlannedConfig& plan = **planned;
  if (globals.verbosity >= 0) {
    for (const std::string& w : plan.planning_warnings) PrintWarning(w);
  }
  WarnAboutConfig(args, plan.config, globals);
  if (Status written = WritePlanOutputs(args, **model, plan, format); !written.ok()) return ReportError(written);
  if (globals.verbosity >= 0) {
    for (const std::string& w : plan.warnings) PrintWarning(w);
  }
  // A plan that makes the peak worse is never silent: a gate that passes says it even under -qq.
  if (const std::string raised = PeakRaisedWarning(plan.report); !raised.empty()) {
    PrintWarning(raised, /*even_if_quiet=*/args.gates.any());
  }
  if (plan.planned && !plan.planned->met) return ReportError(BudgetNotMetError(**model, plan));
  const PeakEstimate& peak = plan.outcome.peak;
  if (globals.verbosity >= 0 && !peak.sized) {
    std::string list;
    for (size_t i = 0; i < peak.unbound_dims.size(); ++i) list += (i ? ", " : "") + peak.unbound_dims[i];
    PrintHint("the peaks are symbolic because dims " + list + " are unbound; rerun with --dims " +
              DimsExample(peak.unbound_dims, &(*model)->loaded.model.graph));
  }
  GateInput gate{"planned peak",       peak.sized,        peak.peak_bytes, (*model)->scan.peak.peak_bytes,
                 peak.unbound_dims, UnsizedValueNames(plan.outcome.rewritten.graph, peak)};
  return CheckGates(args.gates, gate, globals);
}

}  // namespace

std::function<int()> SetupPlan(CLI::App& app, const GlobalOptions& globals) {
  auto args = std::make_shared<PlanArgs>();
  app.add_option("model", args->model, "ONNX training graph (forward + backward)")->required();
  app.add_option("--level", args->level,
                 "1: every type-1 plan with transformer layer boundaries; 2: also compromised (type-2) plans; "
                 "0: basic op table. With --budget: the plans to choose from")
      ->check(CLI::Range(0, 2))
      ->default_val(1);
  app.add_option("--budget", args->budget,
                 "plan for a peak-memory budget: bytes with a unit (12GiB, 800MB) or a fraction of the "
                 "unoptimized peak (0.6); exit 3 when it cannot be met");
  app.add_option("--budget-of", args->budget_of,
                 "what --budget bounds: live (the live-bytes peak, default) or footprint (the planned layout: one "
                 "arena plus weights and inputs, as a static allocator holds it; a fraction is of the unoptimized "
                 "footprint)")
      ->default_val("live");
  app.add_option("--objective", args->objective,
                 "with --budget, what to minimise: time (the cost model's estimated time of the recomputed "
                 "nodes, default) or flops")
      ->default_val("time");
  app.add_option("--planner", args->planner,
                 "with --budget: ilp (integer program over the step model, solved with GLPK and checked by "
                 "simulation; default) or greedy (the simulation-driven search alone)")
      ->default_val("ilp");
  app.add_option("--target", args->target,
                 "with --budget, who applies the config: memopt (per-occurrence plans for memopt apply, default) or "
                 "ort (whole clusters only, so that ONNX Runtime 1.19.2 builds the graph memopt predicted)")
      ->default_val("memopt");
  app.add_option("--splits", args->splits,
                 "with --budget or --sweep and --target memopt: on (also memopt's split model: several clones of "
                 "a value, one per group of its backward readers; default) or off (ORT's model only: one clone per "
                 "recomputed value)")
      ->default_val("on");
  app.add_option("--checkpoints", args->checkpoints,
                 "with --budget or --sweep and --target memopt: on (the planner may also recompute a block's "
                 "activations from the block's input, as checkpoint(block) does, value by value: config ids "
                 "\"checkpoint(<block>)\"; default) or off")
      ->default_val("on");
  app.add_option("--dims", args->dims, "bind symbolic dims, e.g. batch=8,seq_len=512");
  AddOpTableOptions(app, args->ops, args->op_table, "; give apply the same --ops and --op-table");
  app.add_option("-o,--output", args->output, "write the config (ORT mem_opt.json format) to FILE");
  app.add_option("--format", args->format, "report format: table | json | csv | markdown")->default_val("table");
  app.add_option("--boundary", args->boundary, "name of the last forward node (overrides YieldOp / loss detection)");
  app.add_option("--timeline", args->timeline,
                 "write the memory timeline of the original and the planned step: FILE.html (interactive) or "
                 "FILE.svg (static); - = SVG on stdout");
  app.add_flag("--sweep", args->sweep,
               "plan budgets from the unoptimized peak down to the lowest reachable one and print the frontier "
               "(peak vs added compute) with ORT level 1, level 2 and per-block checkpointing beside it; -o writes "
               "that report");
  app.add_option("--sweep-points", args->sweep_points, "budgets of --sweep, both ends included")
      ->check(CLI::Range(2, 200))
      ->default_val(10);
  app.add_option("--plot", args->plot, "with --sweep: draw the frontier to FILE.html (interactive) or FILE.svg");
  AddGateOptions(app, args->gates);
  return [args, &globals] { return RunPlan(*args, globals, !args->budget.empty()); };
}

}  // namespace memopt::cli
