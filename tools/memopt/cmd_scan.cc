// memopt scan MODEL: find recompute candidates (ORT's memory optimizer analysis) and estimate
// the peak memory of one training step.
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "analysis/op_table.h"
#include "analysis/scan.h"
#include "cli.h"
#include "io/temp_file.h"
#include "gates.h"
#include "report/no_candidate_hint.h"
#include "report/scan_report.h"
#include "scan_views.h"

namespace memopt::cli {

namespace {

struct ScanArgs {
  std::string model;
  std::string dims;
  int level = 1;
  std::string format = "table";
  bool details = false;
  std::string output;
  std::string boundary;
  std::string ops = "ort";
  std::string op_table;
  bool timings = false;
  GateOptions gates;
  ScanViewArgs views;
};

int RunScan(const ScanArgs& args, const GlobalOptions& globals) {
  OutputFormat format;
  if (!ParseOutputFormat(args.format, &format)) {
    return ReportError(UsageError("unknown --format '" + args.format + "'; use table, json, csv or markdown"));
  }
  Status gates_ok = ValidateGateOptions(args.gates);
  if (!gates_ok.ok()) return ReportError(gates_ok);
  Status views_ok = ValidateScanViews(args.views, args.output);
  if (!views_ok.ok()) return ReportError(views_ok);
  if (!args.output.empty()) {
    if (Status out = io::CheckOutputPath(args.output, args.model); !out.ok()) return ReportError(out);
  }
  Stopwatch total;
  auto scanned = LoadAndScan({args.model, args.dims, args.ops, args.op_table, args.level, args.boundary});
  if (!scanned.ok()) return ReportError(scanned.status());
  const ScannedModel& m = **scanned;
  const Graph& graph = m.graph();
  const ScanResult* result = &m.scan;
  const ScanOptions& options = m.options;
  const LoadedModel* loaded = &m.loaded;

  auto replaced = RunScanViews(args.views, {args.model, &loaded->model, &*result, &options, format, args.output});
  if (!replaced.ok()) return ReportError(replaced.status());
  if (!*replaced) {
    ScanReportInput report{args.model, &graph, &*result, &options, &loaded->shape_stats, args.details};
    std::string text =
        format == OutputFormat::kJson ? ScanToJson(report).dump(2) + "\n" : RenderScanText(report, format);
    Status written = WriteOutput(args.output, text, args.model);
    if (!written.ok()) return ReportError(written);
  }

  if (globals.verbosity >= 0) {
    if (auto hint = NoCandidateHint(graph, *result, m.dims, 3, options.op_table)) PrintHint(*hint);
  }
  if (globals.verbosity >= 0 && !result->peak.unbound_dims.empty()) {
    std::string list;
    for (size_t i = 0; i < result->peak.unbound_dims.size(); ++i) list += (i ? ", " : "") + result->peak.unbound_dims[i];
    PrintHint("savings and peak are symbolic because dims " + list + " are unbound; rerun with --dims " +
              DimsExample(result->peak.unbound_dims, &graph));
  }
  if (globals.verbosity >= 0 && !loaded->shape_stats.ops_without_rule.empty()) {
    std::string ops;
    for (const auto& op : loaded->shape_stats.ops_without_rule) ops += (ops.empty() ? "" : ", ") + op;
    PrintWarning("no shape rule for " + ops + "; their outputs use declared shapes where present (see --details)");
  }
  if (args.timings) {
    std::fprintf(stderr, "memopt: timings: load_ms=%.3f infer_ms=%.3f analysis_ms=%.3f total_ms=%.3f nodes=%zu\n",
                 loaded->load_ms, loaded->infer_ms, m.scan_ms, total.ElapsedMs(), graph.nodes.size());
  }
  GateInput gate{"estimated peak", result->peak.sized, result->peak.peak_bytes, result->peak.peak_bytes,
                 result->peak.unbound_dims, UnsizedValueNames(graph, result->peak)};
  return CheckGates(args.gates, gate, globals);
}

}  // namespace

std::function<int()> SetupScan(CLI::App& app, const GlobalOptions& globals) {
  auto args = std::make_shared<ScanArgs>();
  app.add_option("model", args->model, "ONNX training graph (forward + backward)")->required();
  app.add_option("--dims", args->dims, "bind symbolic dims, e.g. batch=8,seq_len=512");
  app.add_option("--level", args->level,
                 "0: basic op table; 1: advanced table + transformer layer boundaries; 2: also compromised plans")
      ->check(CLI::Range(0, 2))
      ->default_val(1);
  app.add_option("--format", args->format, "table | json | csv | markdown")->default_val("table");
  app.add_flag("--details", args->details, "node-level view: layer boundaries, each plan's nodes, rejected nodes");
  app.add_option("-o,--output", args->output, "write the report to FILE instead of stdout");
  app.add_option("--boundary", args->boundary, "name of the last forward node (overrides YieldOp / loss detection)");
  AddOpTableOptions(app, args->ops, args->op_table, "");
  app.add_flag("--timings", args->timings, "print load / shape inference / analysis times to stderr");
  AddGateOptions(app, args->gates);
  AddScanViewOptions(app, args->views);
  return [args, &globals] { return RunScan(*args, globals); };
}

}  // namespace memopt::cli
