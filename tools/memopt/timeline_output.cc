#include "timeline_output.h"

#include <fmt/format.h>

#include "cli.h"
#include "report/timeline_data.h"
#include "report/timeline_render.h"

namespace memopt::cli {

namespace {

std::string DimsText(const DimBindings& dims) {
  std::string out;
  for (const auto& [name, value] : dims.values()) out += fmt::format("{}{}={}", out.empty() ? "" : ", ", name, value);
  return out.empty() ? "no dims bound" : "dims " + out;
}

Status Write(const std::string& path, const TimelineView& view, const std::string& model_path) {
  MEMOPT_ASSIGN_OR_RETURN(TimelineFormat format, TimelineFormatForPath(path));
  Progress progress("drawing the timeline");
  const std::string text = RenderTimeline(view, format);
  return WriteOutput(path, text, model_path);
}

}  // namespace

Status WriteScanTimeline(const ScanTimelineRequest& request, const Graph& graph, const ScanResult& scan,
                         const DimBindings& dims) {
  const TimelineData data = ComputeGraphTimeline(graph, scan.order, dims);
  TimelineView view;
  view.title = "memopt scan " + request.model_path;
  view.subtitle = fmt::format("{} nodes; boundary: {}; {}; level {}", graph.nodes.size(),
                              scan.boundary.explanation.empty() ? "none" : scan.boundary.explanation,
                              DimsText(dims), request.level);
  view.original = &data;
  return Write(request.path, view, request.model_path);
}

Status WriteRewriteTimeline(const RewriteTimelineRequest& request, const Graph& graph, const ScanResult& scan,
                            const Graph& rewritten, const ExecutionOrder& rewritten_order, const DimBindings& dims) {
  const TimelineData original = ComputeGraphTimeline(graph, scan.order, dims);
  const TimelineData after = ComputeGraphTimeline(rewritten, rewritten_order, dims);
  TimelineView view;
  view.title = fmt::format("memopt {} {}", request.command, request.model_path);
  view.subtitle = fmt::format("{} nodes, {} after the rewrite; {}{}", graph.nodes.size(), rewritten.nodes.size(),
                              DimsText(dims), request.mode.empty() ? "" : "; " + request.mode);
  view.original = &original;
  view.rewritten = &after;
  return Write(request.path, view, request.model_path);
}

}  // namespace memopt::cli
