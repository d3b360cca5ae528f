// The memory timeline as a static SVG image (for docs and pull requests): the picture described
// in timeline_render.h, with a title, a legend, IEC byte ticks, step ticks and native tooltips
// (<title>) on the peak markers. The output is deterministic (coordinates printed with one
// decimal), so it can be golden-tested.
#pragma once

#include <cstddef>
#include <string>

#include "report/timeline_render.h"

namespace memopt {

struct SvgTimelineOptions {
  int width = 960;
  int height = 440;
  /// At most this many points per timeline (and never more than one per horizontal pixel).
  size_t max_points = kSvgTimelinePoints;
};

std::string RenderTimelineSvg(const TimelineView& view, const SvgTimelineOptions& options = {});

}  // namespace memopt
