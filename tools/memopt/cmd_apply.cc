// memopt apply MODEL --config mem_opt.json -o OUT.onnx: apply the recompute plans a config
// selects (ORT's rewrite: _recompute clones before their first backward consumer, rewired
// backward consumers, seeded Dropouts), write the model, and optionally verify it on the CPU
// executor against the original.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "cli.h"
#include "io/temp_file.h"
#include "pipeline/plan_pipeline.h"
#include "plan/layer_checkpoint.h"
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

/// The usage errors of apply's options, found before anything is loaded.
Status CheckApplyArgs(const ApplyArgs& args, OutputFormat* format, CountSemantics* semantics) {
  if (args.timeline == "-") {
    return UsageError("apply --timeline needs a file name (FILE.html or FILE.svg); stdout carries the report");
  }
  if (!args.timeline.empty()) MEMOPT_RETURN_IF_ERROR(TimelineFormatForPath(args.timeline).status());
  if (!ParseOutputFormat(args.format, format)) {
    return UsageError("unknown --format '" + args.format + "'; use table, json, csv or markdown");
  }
  if (!ParseCountSemantics(args.count_semantics, semantics)) {
    return UsageError("unknown --count-semantics '" + args.count_semantics + "'; use documented or ort");
  }
  MEMOPT_RETURN_IF_ERROR(io::CheckOutputPath(args.output, args.model));
  if (args.verify) {
    auto target = io::ResolveOutputTarget(args.output);
    if (target.ok() && target->direct()) {
      return UsageError("--verify reads the written model back; give -o a file path instead of '" + args.output + "'");
    }
  }
  return Status::Ok();
}

/// The plans `config` selects in `model`, its warnings printed.
Expected<Selection> SelectForApply(const ApplyArgs& args, const ScannedModel& model, const MemoryOptConfig& config,
                                   CountSemantics semantics, const GlobalOptions& globals) {
  SelectionOptions options;
  options.count_semantics = semantics;
  options.lenient = args.lenient;
  for (const ConfigEntry& e : config.entries) {
    if (args.ops == "ort" && ClusterNeedsExtendedOps(e.cluster_id)) {
      options.unknown_id_hint = "'" + e.cluster_id + "' recomputes ops of memopt's extended table: give apply "
                                "--ops extended, as plan was given";
      break;
    }
  }
  const RewriteSpecBuilder builder(model.graph(), model.scan);
  options.builder = &builder;
  auto selection = SelectPlans(model.scan, config, options);
  if (!selection.ok()) return selection.status().WithContext(args.config);
  if (globals.verbosity >= 0) {
    for (const std::string& w : selection->warnings) PrintWarning(w);
  }
  return selection;
}

/// The table report's last lines: what was written where.
std::string WrittenText(const ApplyArgs& args, const PlanOutcome& outcome, const WriteModelReport& written) {
  std::string text = fmt::format("\nWrote {} ({} nodes: {} recompute clones, {} backward inputs rewired", args.output,
                                 outcome.rewritten.graph.nodes.size(), outcome.nodes_added, outcome.rewired_inputs);
  if (!outcome.spec.seeded_dropouts.empty()) {
    text += fmt::format(", {} Dropout seed{} set", outcome.spec.seeded_dropouts.size(),
                        outcome.spec.seeded_dropouts.size() == 1 ? "" : "s");
  }
  text += ")\n";
  if (!written.external_data_file.empty()) {
    text += fmt::format("  {} initializers ({}) written to external data {}\n", written.externalized_tensors,
                        HumanBytes(static_cast<int64_t>(written.externalized_bytes)), written.external_data_file);
  }
  for (const std::string& f : written.copied_external_files) text += "  copied external data " + f + "\n";
  return text;
}

/// --verify: runs the written model, read back, against the original on the CPU executor; adds
/// the result to the report (`text` or `json`).
Status VerifyWritten(const ApplyArgs& args, const ScannedModel& model, const PlanOutcome& outcome,
                     const Model& reloaded, OutputFormat format, std::string* text, nlohmann::json* json,
                     const GlobalOptions& globals) {
  VerifyOptions options;
  options.seed = args.seed;
  options.boundary_node = args.boundary;
  MEMOPT_ASSIGN_OR_RETURN(auto verified,
                          VerifyRewrite(model.loaded.model, model.scan, outcome, reloaded, model.dims, options));
  const int64_t measured = verified.measured_peak_bytes;
  const bool predicted_sized = outcome.peak.sized;
  if (format == OutputFormat::kJson) {
    (*json)["verify"] = {{"passed", true},
                         {"outputs", verified.outputs_compared},
                         {"seed", args.seed},
                         {"measured_peak_bytes", measured},
                         {"predicted_peak_bytes",
                          predicted_sized ? nlohmann::json(outcome.peak.peak_bytes) : nlohmann::json(nullptr)}};
  } else {
    *text += fmt::format("\nVerify: {} outputs bit-identical to the original (CPU executor, seed {})\n",
                         verified.outputs_compared, args.seed);
    *text += fmt::format("  measured peak {} ({} bytes), predicted {}\n", HumanBytes(measured), WithThousands(measured),
                         predicted_sized ? WithThousands(outcome.peak.peak_bytes) + " bytes" : "symbolic");
  }
  if (predicted_sized && measured != outcome.peak.peak_bytes && globals.verbosity >= 0) {
    PrintWarning(fmt::format("measured peak {} differs from the predicted {} (values of unknown size count 0 in "
                             "the prediction)",
                             measured, outcome.peak.peak_bytes));
  }
  return Status::Ok();
}

int RunApply(const ApplyArgs& args, const GlobalOptions& globals) {
  ApplyThreads(args.threads);
  OutputFormat format;
  CountSemantics semantics;
  if (Status usage = CheckApplyArgs(args, &format, &semantics); !usage.ok()) return ReportError(usage);
  auto config = ReadConfig(args.config);
  if (!config.ok()) return ReportError(config.status());
  // A config that names checkpoint plans (plan --checkpoints on) is matched against them too.
  bool checkpoints = false;
  for (const ConfigEntry& e : config->entries) checkpoints = checkpoints || IsCheckpointCluster(e.cluster_id);
  for (const ConfigSelector& s : config->selectors) checkpoints = checkpoints || IsCheckpointCluster(s.cluster_id);
  for (const ConfigSplit& s : config->splits) checkpoints = checkpoints || IsCheckpointCluster(s.cluster_id);
  auto model =
      LoadAndScan({args.model, args.dims, args.ops, args.op_table, args.level, args.boundary, checkpoints});
  if (!model.ok()) return ReportError(model.status());
  const ScannedModel& m = **model;
  auto selection = SelectForApply(args, m, *config, semantics, globals);
  if (!selection.ok()) return ReportError(selection.status());
  auto outcome = EvaluatePlanExactly(m.graph(), m.scan, selection->plans, m.dims);
  if (!outcome.ok()) return ReportError(outcome.status().WithContext(args.model));

  std::vector<std::string> nodes;
  nodes.reserve(outcome->rewritten.graph.nodes.size());
  for (const Node& node : outcome->rewritten.graph.nodes) nodes.push_back(outcome->rewritten.graph.ToProto(node).SerializeAsString());
  auto written = WriteModelWithNodes(m.loaded.model, nodes, args.output);
  if (!written.ok()) return ReportError(written.status());

  PlanReportInput report;
  report.command = "apply";
  report.mode = fmt::format("config {} ({} count semantics)", args.config, args.count_semantics);
  for (const ConfigEntry& e : config->entries) report.config.push_back(e.text);
  for (const ConfigSelector& s : config->selectors) report.config.push_back(s.text);
  if (Status described = DescribeRewrite(m, *selection, *outcome, &report); !described.ok()) return ReportError(described);
  if (!args.timeline.empty()) {
    RewriteTimelineRequest request{args.timeline, args.model, "apply", "config " + args.config};
    Status drawn = WriteRewriteTimeline(request, m.graph(), m.scan, outcome->rewritten.graph, outcome->rewritten.order, m.dims);
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
    if (format == OutputFormat::kTable) text += WrittenText(args, *outcome, *written);
  }
  Status verified = Status::Ok();
  if (args.verify) {
    // A model that cannot be read back is an error before any report; a failed comparison comes
    // after the report it belongs to.
    auto reloaded = LoadModel(args.output);
    if (!reloaded.ok()) return ReportError(reloaded.status().WithContext("--verify: reading " + args.output));
    verified = VerifyWritten(args, m, *outcome, *reloaded, format, &text, &json_report, globals);
  }
  if (format == OutputFormat::kJson) text = json_report.dump(2) + "\n";
  PrintReport(text, args.output == "-");  // -o -: the model took stdout
  if (!verified.ok()) return ReportError(verified);
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
