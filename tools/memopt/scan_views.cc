#include "scan_views.h"

#include <fmt/format.h>

#include "cli.h"
#include "io/atomic_write.h"
#include "report/activations.h"
#include "report/candidate_subgraph.h"
#include "report/dot.h"
#include "report/extract.h"
#include "report/timeline_render.h"
#include "timeline_output.h"

namespace memopt::cli {

namespace {

bool ToStdout(const std::string& path) { return path == "-"; }

}  // namespace

void AddScanViewOptions(CLI::App& app, ScanViewArgs& args) {
  app.add_option("--timeline", args.timeline,
                 "write the memory timeline: FILE.html (interactive, self-contained) or FILE.svg (static); "
                 "- = SVG on stdout");
  CLI::Option* show = app.add_option("--show", args.show,
                                     "show one recompute candidate: CLUSTER[@N][:TYPE] from the plan table, "
                                     "e.g. Gelu+ or Gelu+@2 (N: occurrence, 0 = first)");
  app.add_option("--dot", args.dot, "with --show: write the candidate's subgraph as Graphviz DOT (- = stdout)")
      ->needs(show);
  app.add_option("--extract", args.extract, "with --show: write the candidate's subgraph as a small ONNX model")
      ->needs(show);
  app.add_flag("--activations", args.activations,
               "per-activation table instead of the plan table: shape, bytes, live range, SAVE/RECOMPUTE")
      ->excludes(show);
}

Status ValidateScanViews(const ScanViewArgs& args, const std::string& output) {
  if (!args.timeline.empty()) {
    Expected<TimelineFormat> format = TimelineFormatForPath(args.timeline);
    if (!format.ok()) return format.status();
  }
  if (ToStdout(args.extract)) {
    return UsageError("--extract needs a file name (an ONNX model is binary; it is not written to stdout)");
  }
  int on_stdout = (ToStdout(args.timeline) ? 1 : 0) + (ToStdout(args.dot) ? 1 : 0) + (ToStdout(output) ? 1 : 0);
  if (on_stdout > 1) {
    return UsageError("only one of --timeline, --dot and -o can write to stdout ('-'); give the others a file name");
  }
  return Status::Ok();
}

Expected<bool> RunScanViews(const ScanViewArgs& args, const ScanViewContext& ctx) {
  const Graph& graph = ctx.model->graph;
  const ScanResult& scan = *ctx.scan;
  const DimBindings& dims = ctx.options->dims;
  const bool artifact_on_stdout = ToStdout(args.timeline) || ToStdout(args.dot);
  // The primary text goes to -o, else to stdout unless a view took it.
  auto write_primary = [&](const std::string& text) -> Status {
    if (!ctx.output.empty()) return WriteOutput(ctx.output, text, ctx.model_path);
    if (artifact_on_stdout) return Status::Ok();
    return WriteOutput("", text, ctx.model_path);
  };

  if (!args.timeline.empty()) {
    ScanTimelineRequest request;
    request.path = args.timeline;
    request.model_path = ctx.model_path;
    request.level = ctx.options->level;
    MEMOPT_RETURN_IF_ERROR(WriteScanTimeline(request, graph, scan, dims));
    if (!ToStdout(args.timeline)) PrintInfo(1, "wrote the timeline to " + args.timeline);
  }

  if (!args.show.empty()) {
    MEMOPT_ASSIGN_OR_RETURN(CandidateSelector selector, ParseCandidateSelector(args.show));
    MEMOPT_ASSIGN_OR_RETURN(size_t plan, FindCandidatePlan(scan, selector));
    const CandidateSubgraph candidate = BuildCandidateSubgraph(graph, scan, plan);
    if (!args.dot.empty()) {
      MEMOPT_RETURN_IF_ERROR(WriteOutput(args.dot, RenderCandidateDot(graph, scan, candidate, dims), ctx.model_path));
    }
    if (!args.extract.empty()) {
      ExtractOptions options;
      options.ir_version = ctx.model->ir_version;
      options.source_model = ctx.model_path;
      MEMOPT_ASSIGN_OR_RETURN(std::string bytes, ExtractCandidateModel(graph, scan, candidate, options));
      MEMOPT_RETURN_IF_ERROR(WriteFileAtomically(args.extract, bytes, ctx.model_path));
      PrintInfo(1, fmt::format("wrote the candidate model to {} ({} nodes)", args.extract,
                               candidate.recompute.size() + candidate.consumers.size()));
    }
    MEMOPT_RETURN_IF_ERROR(write_primary(RenderCandidateText(graph, scan, candidate, dims)));
    return true;
  }

  if (args.activations) {
    ActivationOptions options;
    options.dims = dims;
    options.plans = TablePlans(scan);
    options.plan_label = fmt::format("level {} plan table ({} plan{}, what ORTModule applies at this level)",
                                     ctx.options->level, options.plans.size(), options.plans.size() == 1 ? "" : "s");
    const ActivationTable table = BuildActivationTable(graph, scan, options);
    const std::string text = ctx.format == OutputFormat::kJson
                                 ? ActivationsToJson(ctx.model_path, graph, table, options).dump(2) + "\n"
                                 : RenderActivationsText(ctx.model_path, graph, table, options, ctx.format);
    MEMOPT_RETURN_IF_ERROR(write_primary(text));
    return true;
  }
  return artifact_on_stdout && ctx.output.empty();
}

}  // namespace memopt::cli
