// The memory timeline as a file: a self-contained interactive HTML page (timeline_html.h) or a
// static SVG (timeline_svg.h), chosen by the file name. Both draw the same picture:
//   * live bytes over the execution order, stacked by kind (weights and inputs, stashed
//     activations, transient activations, gradients; see timeline_data.h);
//   * the peak, marked with the node that runs there;
//   * the forward/backward boundary;
//   * with a rewritten timeline (plan/apply), the rewritten step's total drawn as a line over the
//     original's stacked areas, with its own peak, both on the same step axis.
// Long orders are aggregated (AggregateTimeline): each plotted point stands for a bucket of steps
// and shows the step with the most live bytes, so the drawn maximum is the exact peak; the
// bucket minimum is drawn as a thin line.
#pragma once

#include <string>

#include "report/timeline_data.h"
#include "util/status.h"

namespace memopt {

struct TimelineView {
  std::string title;     ///< first line, e.g. "memopt scan model.onnx"
  std::string subtitle;  ///< second line, e.g. "dims batch=8, seq_len=512 - level 1"
  const TimelineData* original = nullptr;   ///< required
  const TimelineData* rewritten = nullptr;  ///< overlay for plan/apply; nullptr for scan
  std::string original_label = "original";
  std::string rewritten_label = "rewritten";
};

enum class TimelineFormat { kHtml, kSvg };

/// ".html"/".htm" -> kHtml, ".svg" or "-" (stdout) -> kSvg (case-insensitive); anything else is a
/// usage error naming the path.
Expected<TimelineFormat> TimelineFormatForPath(const std::string& path);

/// Most points a renderer plots per timeline.
constexpr size_t kHtmlTimelinePoints = 4000;
constexpr size_t kSvgTimelinePoints = 1000;

/// Renders the page or the image. The view must have `original` set.
std::string RenderTimeline(const TimelineView& view, TimelineFormat format);

/// Fill colour of a kind ("#rrggbb"), the same in both formats.
const char* LiveKindColor(LiveKind kind);
/// Stroke colour of the rewritten (overlay) line.
constexpr const char* kOverlayColor = "#b0186a";

/// "3.11 MiB (3,262,272 bytes) at step 10 of 10 (backward), node 'Gemm_0' (Gemm)"; the step is
/// 1-based as in the scan report. "no steps" for an empty order.
std::string TimelinePeakText(const TimelineData& data);
/// "batch, seq_len unbound (counted as 1024; bind them with --dims)" or "" when sized.
std::string TimelineUnboundText(const TimelineData& data);

/// Number of data series the picture draws: one stacked area per kind, plus one line per overlay.
int TimelineSeriesCount(const TimelineView& view);

}  // namespace memopt
