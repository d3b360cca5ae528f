#include "report/timeline_render.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "analysis/plan_table.h"
#include "report/timeline_html.h"
#include "report/timeline_svg.h"
#include "util/bytes.h"

namespace memopt {

namespace {

bool EndsWithNoCase(const std::string& text, const std::string& suffix) {
  if (text.size() < suffix.size()) return false;
  return std::equal(suffix.begin(), suffix.end(), text.end() - static_cast<std::ptrdiff_t>(suffix.size()),
                    [](char a, char b) {
                      return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
                    });
}

}  // namespace

Expected<TimelineFormat> TimelineFormatForPath(const std::string& path) {
  if (path == "-" || EndsWithNoCase(path, ".svg")) return TimelineFormat::kSvg;
  if (EndsWithNoCase(path, ".html") || EndsWithNoCase(path, ".htm")) return TimelineFormat::kHtml;
  return UsageError("--timeline '" + path +
                    "': the file name must end in .html (interactive page) or .svg (static image), or be - "
                    "(SVG on stdout)");
}

std::string RenderTimeline(const TimelineView& view, TimelineFormat format) {
  return format == TimelineFormat::kHtml ? RenderTimelineHtml(view) : RenderTimelineSvg(view);
}

const char* LiveKindColor(LiveKind kind) {
  switch (kind) {
    case LiveKind::kWeightsAndInputs: return "#9aa3ad";
    case LiveKind::kStashed: return "#e8830c";
    case LiveKind::kTransient: return "#4f8fd8";
    case LiveKind::kGradients: return "#3ba56b";
  }
  return "#4f8fd8";
}

std::string TimelinePeakText(const TimelineData& data) {
  if (data.peak_position < 0) return "no steps";
  const Node& node = data.graph->node(data.peak_node);
  const char* phase = data.peak_position <= data.last_forward ? "forward" : "backward";
  return fmt::format("{} ({} bytes) at step {} of {} ({}), node '{}' ({})", HumanBytes(data.peak_bytes),
                     WithThousands(data.peak_bytes), data.peak_position + 1, data.steps(), phase, node.name,
                     node.op_type);
}

std::string TimelineUnboundText(const TimelineData& data) {
  if (data.sized) return "";
  std::string names;
  for (const std::string& d : data.unbound_dims) names += (names.empty() ? "" : ", ") + d;
  return fmt::format("{} unbound (counted as {}; bind with --dims)", names, kUnboundDimForOrdering);
}

int TimelineSeriesCount(const TimelineView& view) { return kNumLiveKinds + (view.rewritten != nullptr ? 1 : 0); }

}  // namespace memopt
