// memopt plan MODEL: write a memory-optimizer config (ORT's mem_opt.json format) for a level
// (every type-1 plan, or type-1 and type-2 plans) or for a memory budget, with a before/after
// report of the rewritten training step.
#include <cmath>
#include <cstdio>
#include <set>

#include <fmt/format.h>

#include "analysis/scan.h"
#include "cli.h"
#include "io/temp_file.h"
#include "gates.h"
#include "plan_sweep.h"
#include "plan/budget_planner.h"
#include "plan/config.h"
#include "plan/cost_model.h"
#include "plan/plan_outcome.h"
#include "report/plan_report.h"
#include "plan/selection.h"
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
  std::string planner = "ilp";
  bool sweep = false;
  int sweep_points = 10;
  std::string plot;
  GateOptions gates;
};

std::string BytesText(int64_t bytes) { return fmt::format("{} ({} bytes)", HumanBytes(bytes), WithThousands(bytes)); }

/// Why the best budget plan stays above the budget: what is live at its peak.
std::string BudgetShortfall(const Graph& graph, const ScanResult& scan, const PlanOutcome& best, int64_t budget,
                            int64_t lowest_peak, const DimBindings& dims) {
  const Graph& g = best.rewritten.graph;
  const PeakEstimate& p = best.peak;
  std::string where = p.peak_node == kNone
                          ? std::string()
                          : fmt::format(" at node '{}' ({}, {})", g.node(p.peak_node).name, g.node(p.peak_node).op_type,
                                        p.peak_position <= best.rewritten.order.last_forward ? "forward" : "backward");
  std::string out = fmt::format("the budget {} cannot be met: the best plan found reaches {}{}, {} over the budget",
                                BytesText(budget), BytesText(p.peak_bytes), where, HumanBytes(p.peak_bytes - budget));
  std::vector<LiveValue> live = LiveAt(g, best.rewritten.order, p.peak_position, dims);
  int64_t fixed = 0, activations = 0;
  for (const LiveValue& v : live) (v.always_live ? fixed : activations) += v.bytes;
  out += fmt::format("; live there: weights and graph inputs {}, activations {}", HumanBytes(fixed),
                     HumanBytes(activations));
  std::vector<std::string> largest;
  for (const LiveValue& v : live) {
    if (v.always_live) continue;
    const Value& value = g.value(v.value);
    std::string why = "a tensor of this step";
    // Original values keep their ids in the rewritten graph.
    if (static_cast<size_t>(v.value) < graph.values.size()) {
      NodeId producer = graph.value(v.value).producer;
      for (const RejectedCandidate& rc : scan.rejected) {
        if (rc.node == producer) why = "stashed: " + rc.reason;
      }
    } else {
      why = "recomputed";
    }
    largest.push_back(fmt::format("'{}' {} ({})", value.name, HumanBytes(v.bytes), why));
    if (largest.size() == 3) break;
  }
  if (!largest.empty()) {
    out += "; largest activations:";
    for (size_t i = 0; i < largest.size(); ++i) out += (i ? ", " : " ") + largest[i];
  }
  out += fmt::format("; it would take a budget of at least {}", BytesText(std::min(lowest_peak, p.peak_bytes)));
  if (fixed > budget) out += " (weights and graph inputs alone exceed the budget)";
  return out;
}

int RunPlan(const PlanArgs& args, const GlobalOptions& globals, bool budget_mode) {
  if (args.timeline == "-" && args.output == "-") {
    return ReportError(UsageError("-o - and --timeline - both want stdout; give one of them a file name"));
  }
  if (!args.timeline.empty()) {
    if (auto f = TimelineFormatForPath(args.timeline); !f.ok()) return ReportError(f.status());
  }
  OutputFormat format;
  if (!ParseOutputFormat(args.format, &format)) {
    return ReportError(UsageError("unknown --format '" + args.format + "'; use table, json, csv or markdown"));
  }
  Status gates_ok = ValidateGateOptions(args.gates);
  if (!gates_ok.ok()) return ReportError(gates_ok);
  if (args.objective != "time" && args.objective != "flops") {
    return ReportError(UsageError("unknown --objective '" + args.objective + "'; use time or flops"));
  }
  if (args.planner != "ilp" && args.planner != "greedy") {
    return ReportError(UsageError("unknown --planner '" + args.planner + "'; use ilp or greedy"));
  }
  if (args.target != "memopt" && args.target != "ort") {
    return ReportError(UsageError("unknown --target '" + args.target + "'; use memopt or ort"));
  }
  if (args.sweep && !args.budget.empty()) {
    return ReportError(UsageError("--sweep plans its own budgets; drop --budget"));
  }
  if (!args.plot.empty() && !args.sweep) return ReportError(UsageError("--plot draws the --sweep frontier; add --sweep"));
  auto ends_with = [&args](const std::string& suffix) {
    return args.plot.size() > suffix.size() && args.plot.compare(args.plot.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  const bool plot_svg = ends_with(".svg");
  if (!args.plot.empty() && !plot_svg && !ends_with(".html")) {
    return ReportError(UsageError("--plot " + args.plot + ": give a FILE.html or FILE.svg"));
  }
  if (args.sweep && !args.timeline.empty()) return ReportError(UsageError("--timeline draws one plan; not with --sweep"));
  if (args.sweep && args.gates.any()) {
    return ReportError(UsageError("--fail-above and --baseline gate one plan's peak; not with --sweep"));
  }
  if (args.target == "ort" && args.ops == "extended") {
    return ReportError(UsageError("--target ort plans what ONNX Runtime 1.19.2 applies, and it does not know memopt's "
                                  "extended ops; use --ops ort with --target ort"));
  }
  if (!budget_mode && (args.objective != "time" || args.planner != "ilp") && globals.verbosity >= 0) {
    PrintWarning("--objective and --planner apply to --budget plans only; a --level plan takes every plan of the level");
  }
  if (!args.output.empty()) {
    if (Status out = io::CheckOutputPath(args.output, args.model); !out.ok()) return ReportError(out);
  }
  SizeSpec budget_spec;
  if (budget_mode) {
    auto spec = ParseSize(args.budget);
    if (!spec.ok()) return ReportError(spec.status().WithContext("--budget"));
    budget_spec = *spec;
  }

  auto loaded = LoadAndInfer(args.model);
  if (!loaded.ok()) return ReportError(loaded.status());
  const Graph& graph = loaded->model.graph;
  auto dims = ParseDimsForModel(args.dims, *loaded);
  if (!dims.ok()) return ReportError(dims.status());

  auto op_table = LoadOpTableOption(args.ops, args.op_table);
  if (!op_table.ok()) return ReportError(op_table.status());
  ScanOptions options;
  options.level = args.level;
  options.boundary_node = args.boundary;
  options.dims = *dims;
  options.op_table = *op_table ? &**op_table : nullptr;
  auto scan = Scan(graph, options);
  if (!scan.ok()) return ReportError(scan.status().WithContext(args.model));

  // What budget plans (one, or the sweep's) choose from and minimise.
  std::optional<PlanEvaluator> evaluator;
  BudgetPlanOptions budget_options;
  if (budget_mode || args.sweep) {
    auto created = PlanEvaluator::Create(graph, *scan, *dims);
    if (!created.ok()) return ReportError(created.status().WithContext(args.model));
    evaluator.emplace(std::move(created).value());
    budget_options.candidates = BudgetCandidates(*scan, args.level, evaluator->spec_builder());
    budget_options.objective = args.objective == "flops" ? PlanObjective::kFlops : PlanObjective::kTime;
    if (args.target == "ort") budget_options.groups = WholeClusterGroups(*scan, budget_options.candidates);
    budget_options.integer_program = args.planner == "ilp";
  }

  if (args.sweep) {
    SweepRequest request;
    request.model_name = args.model;
    request.graph = &graph;
    request.scan = &*scan;
    request.evaluator = &*evaluator;
    request.scan_options = options;
    request.dims = *dims;
    request.plan = budget_options;
    request.points = args.sweep_points;
    request.plot = args.plot;
    request.plot_svg = plot_svg;
    request.format = format;
    request.output = args.output;
    return RunPlanSweep(request, globals.verbosity);
  }

  std::vector<std::string> warnings;
  MemoryOptConfig config;
  PlanReportInput report;
  std::optional<BudgetPlanResult> planned;
  if (!budget_mode) {
    config = LevelConfig(*scan, &warnings);
    report.mode = fmt::format("level {} ({})", args.level,
                              args.level == 2 ? "every type-1 and type-2 plan, transformer layer boundaries"
                              : args.level == 1 ? "every type-1 plan, transformer layer boundaries"
                                                : "every type-1 plan of the basic op table");
  } else {
    if (!scan->peak.sized && !budget_spec.is_fraction) {
      return ReportError(UsageError("--budget " + args.budget + " needs concrete sizes; bind the dims with --dims " +
                                    DimsExample(scan->peak.unbound_dims)));
    }
    const int64_t budget = budget_spec.is_fraction
                               ? static_cast<int64_t>(std::llround(budget_spec.fraction * scan->peak.peak_bytes))
                               : budget_spec.bytes;
    budget_options.budget_bytes = budget;
    auto result = PlanForBudget(*evaluator, budget_options);
    if (!result.ok()) return ReportError(result.status().WithContext(args.model));
    planned = std::move(result).value();
    config = ConfigForPlans(*scan, planned->plans);
    report.mode = fmt::format("budget, level-{} candidates (least added compute within the budget)", args.level);
    report.budget_bytes = budget;
    report.budget_text = budget_spec.is_fraction
                             ? fmt::format("{} of the unoptimized peak = {}", args.budget, HumanBytes(budget))
                             : fmt::format("{} = {}", args.budget, HumanBytes(budget));
    report.budget_met = planned->met;
    report.planner_evaluations = planned->evaluations;
    report.planner_method = std::string(PlanMethodName(planned->method));
    report.planner_quality = DescribeQuality(*planned);
    if (QualityOf(*planned) != PlanQuality::kNoBound) report.planner_gap = planned->optimal ? 0.0 : planned->gap;
    report.planner_candidates = static_cast<int>(args.target == "ort" ? budget_options.groups.size()
                                                                      : budget_options.candidates.size());
    report.objective = args.objective == "flops"
                           ? "added FLOPs of the recomputed nodes"
                           : "added compute time of the recomputed nodes on the cost model's roofline (" +
                                 DescribeRoofline(CostModel{}) + "; docs/plan.md)";
    report.target = args.target == "ort"
                        ? "ort (whole clusters: every occurrence of each chosen cluster id, as ONNX Runtime 1.19.2 "
                          "applies a config)"
                        : "memopt (per occurrence; memopt apply applies it exactly)";
    if (!scan->peak.sized && globals.verbosity >= 0) {
      PrintWarning("the budget is a fraction of a peak computed with unbound dims set to 1024; bind them with --dims");
    }
  }

  auto selection = SelectPlans(*scan, config);
  if (!selection.ok()) return ReportError(selection.status().WithContext("internal config"));
  if (planned && selection->plans != planned->plans) {
    return ReportError(InternalError("the written config does not select the planned occurrences"));
  }
  auto outcome = EvaluatePlanExactly(graph, *scan, selection->plans, *dims);
  if (!outcome.ok()) return ReportError(outcome.status().WithContext(args.model));
  if (planned && outcome->peak.peak_bytes != planned->evaluation.peak_bytes) {
    return ReportError(InternalError(fmt::format("planner peak {} differs from the rewritten graph's peak {}",
                                                 planned->evaluation.peak_bytes, outcome->peak.peak_bytes)));
  }

  std::string config_text = WriteMemoryOptConfig(config);
  if (!config.selectors.empty() && !args.output.empty() && globals.verbosity >= 0) {
    PrintWarning("the config selects single occurrences (" + config.selectors.front().text +
                 (config.selectors.size() > 1 ? ", ..." : "") +
                 "): `memopt apply` applies it as planned, but ONNX Runtime 1.19.2 ignores those entries and "
                 "recomputes every occurrence of each listed cluster, which gives another peak; plan with "
                 "--target ort for a config ORT applies as predicted");
  }
  if (args.ops == "extended" && !args.output.empty() && globals.verbosity >= 0) {
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
  if (!args.output.empty()) {
    Status written = WriteOutput(args.output, config_text, args.model);
    if (!written.ok()) return ReportError(written);
  }

  report.command = "plan";
  report.model_name = args.model;
  report.graph = &graph;
  report.scan = &*scan;
  report.level = args.level;
  report.dims = *dims;
  for (const ConfigEntry& e : config.entries) {
    report.config.push_back(EntryString(e.cluster_id, e.type, e.count));
    if (const ConfigSelector* s = config.FindSelector(e.cluster_id)) {
      report.config.push_back(SelectorString(s->cluster_id, s->occurrences));
    }
  }
  report.matches = selection->matches;
  report.outcome = &*outcome;
  report.original_stashed = StashedActivations(graph, scan->order, scan->boundary, *dims);
  {
    int64_t forward = 0;
    for (const Node& node : graph.nodes) {
      if (scan->order.IsForward(node.id)) forward += EstimateNodeCost(graph, node, *dims).flops;
    }
    report.forward_flops = forward;
  }
  if (RaisesPeak(report) == true) {
    auto raisers = FindPeakRaisers(graph, *scan, selection->plans, *dims);
    if (!raisers.ok()) return ReportError(raisers.status().WithContext(args.model));
    report.peak_raisers = std::move(raisers).value();
  }
  report.output = args.output;
  if (!args.timeline.empty()) {
    RewriteTimelineRequest request;
    request.path = args.timeline;
    request.model_path = args.model;
    request.command = "plan";
    request.mode = budget_mode ? "budget " + args.budget : fmt::format("level {}", args.level);
    Status written = WriteRewriteTimeline(request, graph, *scan, outcome->rewritten.graph, outcome->rewritten.order, *dims);
    if (!written.ok()) return ReportError(written);
    if (args.timeline != "-") PrintInfo(1, "wrote the timeline to " + args.timeline);
  }
  std::string text;
  if (format == OutputFormat::kJson) {
    text = PlanToJson(report).dump(2) + "\n";
  } else {
    text = RenderPlanText(report, format);
    if (args.output.empty() && format == OutputFormat::kTable) text += "\nConfig (mem_opt.json):\n" + config_text;
  }
  // stdout carries one thing: the SVG (--timeline -), the config (-o -), or else the report.
  PrintReport(text, args.timeline == "-" || args.output == "-");

  if (globals.verbosity >= 0) {
    for (const std::string& w : warnings) PrintWarning(w);
    for (const std::string& w : selection->warnings) PrintWarning(w);
  }
  // A plan that makes the peak worse is never silent: a gate that passes says it even under -qq.
  if (const std::string raised = PeakRaisedWarning(report); !raised.empty()) {
    PrintWarning(raised, /*even_if_quiet=*/args.gates.any());
  }
  if (planned && !planned->met) {
    return ReportError(Status(ErrorCode::kBudgetNotMet,
                              BudgetShortfall(graph, *scan, *outcome, *report.budget_bytes,
                                              std::min(planned->all_candidates.peak_bytes,
                                                       planned->evaluation.peak_bytes),
                                              *dims)));
  }
  if (globals.verbosity >= 0 && !outcome->peak.sized) {
    std::string list;
    for (size_t i = 0; i < outcome->peak.unbound_dims.size(); ++i) list += (i ? ", " : "") + outcome->peak.unbound_dims[i];
    PrintHint("the peaks are symbolic because dims " + list + " are unbound; rerun with --dims " +
              DimsExample(outcome->peak.unbound_dims));
  }
  GateInput gate{"planned peak", outcome->peak.sized, outcome->peak.peak_bytes, scan->peak.peak_bytes,
                 outcome->peak.unbound_dims, UnsizedValueNames(outcome->rewritten.graph, outcome->peak)};
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
               "(peak vs added compute) with ORT level 1, level 2 and per-layer checkpointing beside it; -o writes "
               "that report");
  app.add_option("--sweep-points", args->sweep_points, "budgets of --sweep, both ends included")
      ->check(CLI::Range(2, 200))
      ->default_val(10);
  app.add_option("--plot", args->plot, "with --sweep: draw the frontier to FILE.html (interactive) or FILE.svg");
  AddGateOptions(app, args->gates);
  return [args, &globals] { return RunPlan(*args, globals, !args->budget.empty()); };
}

}  // namespace memopt::cli
