// The memory timeline as one self-contained HTML page: inline CSS, inline JavaScript and the data
// as inline JSON; no network access, no CDN, works offline and from file://. The page draws the
// picture of timeline_render.h as SVG and adds hover details (the node at the step, its output
// tensors with shape and bytes, the live bytes by kind), zoom (wheel, buttons, "zoom to peak"),
// drag to pan, legend entries that hide a kind, and a table of the largest tensors live at the
// peak. Orders longer than `max_points` steps are aggregated (AggregateTimeline), which keeps a
// 100k-node graph's page around a megabyte.
//
// For automated checks the page reports on its <body>: data-render="ok" once drawn,
// data-series-count (the data series drawn, TimelineSeriesCount when no kind is hidden) and
// data-errors (script errors caught by a window "error" handler, normally 0).
#pragma once

#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

#include "report/timeline_render.h"

namespace memopt {

std::string RenderTimelineHtml(const TimelineView& view, size_t max_points = kHtmlTimelinePoints);

/// The data object the page embeds (documented in docs/json_schema.md, "Timeline data").
nlohmann::json TimelineToJson(const TimelineView& view, size_t max_points = kHtmlTimelinePoints);

/// The page around the data: `title` (plain text) and `data_json` (TimelineToJson, serialized).
std::string TimelineHtmlPage(const std::string& title, const std::string& data_json);

}  // namespace memopt
