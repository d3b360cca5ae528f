// memopt apply MODEL --config mem_opt.json -o OUT.onnx: apply the recompute plans a config
// selects (ORT's rewrite: _recompute clones before their first backward consumer, rewired
// backward consumers, seeded Dropouts), write the model, and optionally verify it on the CPU
// executor against the original.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "analysis/scan.h"
#include "cli.h"
#include "io/temp_file.h"
#include "plan/config.h"
#include "plan/plan_outcome.h"
#include "report/plan_report.h"
#include "plan/selection.h"
#include "rewrite/model_writer.h"
#include "verify/verify_rewrite.h"
#include "report/timeline_render.h"
#include "timeline_output.h"
#include "util/bytes.h"

namespace memopt::cli {

namespace {

struct ApplyArgs {
  std::string model;
  std::string ops = "ort";
  std::string op_table;
  std::string config;
  std::string output;
  std::string dims;
  int level = 1;
  std::string boundary;
  std::string count_semantics = "documented";
  bool lenient = false;
  bool verify = false;
  uint64_t seed = 0;
  std::string format = "table";
  std::string timeline;
  int threads = 0;  ///< --threads for --verify (0: the default)
};

Expected<MemoryOptConfig> ReadConfig(const std::string& config) {
  std::error_code ec;
  if (std::filesystem::is_regular_file(config, ec)) {
    std::ifstream in(config, std::ios::binary);
    if (!in) return InvalidInput(config + ": cannot open the config file");
    std::stringstream text;
    text << in.rdbuf();
    return ParseMemoryOptConfig(text.str(), config);
  }
  if (config.find(':') != std::string::npos && !std::filesystem::exists(config, ec)) {
    return ParseInlineConfig(config, "--config");  // the legacy inline form "Gelu+:1:-1,..."
  }
  return InvalidInput(config + ": cannot open the config file (a JSON array such as [\"Gelu+:1:-1\"], or an inline "
                               "string \"Gelu+:1:-1,...\")");
}

int RunApply(const ApplyArgs& args, const GlobalOptions& globals) {
  ApplyThreads(args.threads);
  if (args.timeline == "-") {
    return ReportError(UsageError("apply --timeline needs a file name (FILE.html or FILE.svg); stdout carries the report"));
  }
  if (!args.timeline.empty()) {
    if (auto f = TimelineFormatForPath(args.timeline); !f.ok()) return ReportError(f.status());
  }
  OutputFormat format;
  if (!ParseOutputFormat(args.format, &format)) {
    return ReportError(UsageError("unknown --format '" + args.format + "'; use table, json, csv or markdown"));
  }
  CountSemantics semantics;
  if (!ParseCountSemantics(args.count_semantics, &semantics)) {
    return ReportError(UsageError("unknown --count-semantics '" + args.count_semantics + "'; use documented or ort"));
  }
  if (Status out = io::CheckOutputPath(args.output, args.model); !out.ok()) return ReportError(out);
  if (args.verify) {
    auto target = io::ResolveOutputTarget(args.output);
    if (target.ok() && target->direct()) {
      return ReportError(UsageError("--verify reads the written model back; give -o a file path instead of '" +
                                    args.output + "'"));
    }
  }
  auto loaded = LoadAndInfer(args.model);
  if (!loaded.ok()) return ReportError(loaded.status());
  const Graph& graph = loaded->model.graph;
  auto dims = ParseDimsForModel(args.dims, *loaded);
  if (!dims.ok()) return ReportError(dims.status());
  auto config = ReadConfig(args.config);
  if (!config.ok()) return ReportError(config.status());

  auto op_table = LoadOpTableOption(args.ops, args.op_table);
  if (!op_table.ok()) return ReportError(op_table.status());
  ScanOptions options;
  options.level = args.level;
  options.boundary_node = args.boundary;
  options.dims = *dims;
  options.op_table = *op_table ? &**op_table : nullptr;
  auto scan = Scan(graph, options);
  if (!scan.ok()) return ReportError(scan.status().WithContext(args.model));

  SelectionOptions selection_options;
  selection_options.count_semantics = semantics;
  selection_options.lenient = args.lenient;
  for (const ConfigEntry& e : config->entries) {
    if (args.ops == "ort" && ClusterNeedsExtendedOps(e.cluster_id)) {
      selection_options.unknown_id_hint = "'" + e.cluster_id + "' recomputes ops of memopt's extended table: give apply "
                                          "--ops extended, as plan was given";
      break;
    }
  }
  auto selection = SelectPlans(*scan, *config, selection_options);
  if (!selection.ok()) return ReportError(selection.status().WithContext(args.config));
  if (globals.verbosity >= 0) {
    for (const std::string& w : selection->warnings) PrintWarning(w);
  }
  auto outcome = EvaluatePlanExactly(graph, *scan, selection->plans, *dims);
  if (!outcome.ok()) return ReportError(outcome.status().WithContext(args.model));

  std::vector<std::string> nodes;
  nodes.reserve(outcome->rewritten.graph.nodes.size());
  for (const Node& node : outcome->rewritten.graph.nodes) nodes.push_back(outcome->rewritten.graph.ToProto(node).SerializeAsString());
  auto written = WriteModelWithNodes(loaded->model, nodes, args.output);
  if (!written.ok()) return ReportError(written.status());

  PlanReportInput report;
  report.command = "apply";
  report.model_name = args.model;
  report.graph = &graph;
  report.scan = &*scan;
  report.level = args.level;
  report.dims = *dims;
  report.mode = fmt::format("config {} ({} count semantics)", args.config, args.count_semantics);
  for (const ConfigEntry& e : config->entries) report.config.push_back(e.text);
  for (const ConfigSelector& s : config->selectors) report.config.push_back(s.text);
  report.matches = selection->matches;
  report.outcome = &*outcome;
  report.original_stashed = StashedActivations(graph, scan->order, scan->boundary, *dims);
  for (const Node& node : graph.nodes) {
    if (scan->order.IsForward(node.id)) report.forward_flops += EstimateNodeCost(graph, node, *dims).flops;
  }
  if (RaisesPeak(report) == true) {
    auto raisers = FindPeakRaisers(graph, *scan, selection->plans, *dims);
    if (!raisers.ok()) return ReportError(raisers.status().WithContext(args.model));
    report.peak_raisers = std::move(raisers).value();
  }
  if (!args.timeline.empty()) {
    RewriteTimelineRequest request;
    request.path = args.timeline;
    request.model_path = args.model;
    request.command = "apply";
    request.mode = "config " + args.config;
    Status drawn = WriteRewriteTimeline(request, graph, *scan, outcome->rewritten.graph, outcome->rewritten.order, *dims);
    if (!drawn.ok()) return ReportError(drawn);
    PrintInfo(1, "wrote the timeline to " + args.timeline);
  }
  std::string text;
  nlohmann::json json_report;
  if (format == OutputFormat::kJson) {
    json_report = PlanToJson(report);
    json_report["output"] = args.output;
  } else {
    text = RenderPlanText(report, format);
    if (format == OutputFormat::kTable) {
      text += fmt::format("\nWrote {} ({} nodes: {} recompute clones, {} backward inputs rewired", args.output,
                          outcome->rewritten.graph.nodes.size(), outcome->nodes_added, outcome->rewired_inputs);
      if (!outcome->spec.seeded_dropouts.empty()) {
        text += fmt::format(", {} Dropout seed{} set", outcome->spec.seeded_dropouts.size(),
                            outcome->spec.seeded_dropouts.size() == 1 ? "" : "s");
      }
      text += ")\n";
      if (!written->external_data_file.empty()) {
        text += fmt::format("  {} initializers ({}) written to external data {}\n", written->externalized_tensors,
                            HumanBytes(static_cast<int64_t>(written->externalized_bytes)),
                            written->external_data_file);
      }
      for (const std::string& f : written->copied_external_files) text += "  copied external data " + f + "\n";
    }
  }

  if (args.verify) {
    auto reloaded = LoadModel(args.output);
    if (!reloaded.ok()) return ReportError(reloaded.status().WithContext("--verify: reading " + args.output));
    VerifyOptions verify_options;
    verify_options.seed = args.seed;
    verify_options.boundary_node = args.boundary;
    auto verified = VerifyRewrite(loaded->model, *scan, *outcome, *reloaded, *dims, verify_options);
    if (!verified.ok()) {
      if (format == OutputFormat::kJson) text = json_report.dump(2) + "\n";
      PrintReport(text, args.output == "-");
      return ReportError(verified.status());
    }
    const int64_t measured = verified->measured_peak_bytes;
    const size_t compared = verified->outputs_compared;
    const bool predicted_sized = outcome->peak.sized;
    if (format == OutputFormat::kJson) {
      json_report["verify"] = {{"passed", true},
                               {"outputs", compared},
                               {"seed", args.seed},
                               {"measured_peak_bytes", measured},
                               {"predicted_peak_bytes",
                                predicted_sized ? nlohmann::json(outcome->peak.peak_bytes) : nlohmann::json(nullptr)}};
    } else {
      text += fmt::format("\nVerify: {} outputs bit-identical to the original (CPU executor, seed {})\n", compared,
                          args.seed);
      text += fmt::format("  measured peak {} ({} bytes), predicted {}\n", HumanBytes(measured),
                          WithThousands(measured),
                          predicted_sized ? WithThousands(outcome->peak.peak_bytes) + " bytes" : "symbolic");
    }
    if (predicted_sized && measured != outcome->peak.peak_bytes && globals.verbosity >= 0) {
      PrintWarning(fmt::format("measured peak {} differs from the predicted {} (values of unknown size count 0 in "
                               "the prediction)",
                               measured, outcome->peak.peak_bytes));
    }
  }
  if (format == OutputFormat::kJson) text = json_report.dump(2) + "\n";
  PrintReport(text, args.output == "-");  // -o -: the model took stdout
  if (selection->plans.empty() && globals.verbosity >= 0) {
    PrintWarning("the config selects no plan; the model was written unchanged");
  }
  if (const std::string raised = PeakRaisedWarning(report); !raised.empty()) PrintWarning(raised);
  return kExitOk;
}

}  // namespace

std::function<int()> SetupApply(CLI::App& app, const GlobalOptions& globals) {
  auto args = std::make_shared<ApplyArgs>();
  app.add_option("model", args->model, "ONNX training graph (forward + backward)")->required();
  app.add_option("--config", args->config,
                 "memory-optimizer config: a JSON file [\"Gelu+:1:-1\", ...] (ORT's format, see "
                 "docs/config_format.md) or an inline \"Gelu+:1:-1,...\"")
      ->required();
  app.add_option("-o,--output", args->output, "the rewritten model (must differ from MODEL)")->required();
  app.add_option("--dims", args->dims, "bind symbolic dims, e.g. batch=8,seq_len=512 (needed by --verify)");
  AddOpTableOptions(app, args->ops, args->op_table, ", as given to plan");
  app.add_option("--level", args->level,
                 "analysis level the config was planned at (0, 1 or 2; layer boundaries at 1 and 2)")
      ->check(CLI::Range(0, 2))
      ->default_val(1);
  app.add_option("--boundary", args->boundary, "name of the last forward node (overrides YieldOp / loss detection)");
  app.add_option("--count-semantics", args->count_semantics,
                 "documented: count N applies the first N occurrences; ort: ORT's behaviour (N >= 1 applies all, "
                 "0 all but the last)")
      ->default_val("documented");
  app.add_flag("--lenient", args->lenient, "unknown cluster ids are warnings, not errors (ORT ignores them)");
  app.add_option("--timeline", args->timeline,
                 "write the memory timeline of the original and the rewritten step: FILE.html or FILE.svg");
  app.add_flag("--verify", args->verify,
               "run the original and rewritten models on the CPU executor with the same seeded inputs; every "
               "output must be bit-identical (exit 5 otherwise)");
  app.add_option("--seed", args->seed, "seed of the --verify inputs and Dropout masks")->default_val(0);
  AddThreadsOption(app, args->threads);
  app.add_option("--format", args->format, "report format: table | json | csv | markdown")->default_val("table");
  return [args, &globals] { return RunApply(*args, globals); };
}

}  // namespace memopt::cli
