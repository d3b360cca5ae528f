// The peak-memory / added-compute trade-off of `plan --sweep` as a self-contained SVG (and an HTML
// page around it): x = planned peak, y = added compute (the planner's objective), the budget plans
// as a line of points, each reference (ORT level 1, level 2, per-block checkpointing) as its own
// marker with a label. Every point has a <title> tooltip. No scripts or network resources in the
// SVG; the HTML page adds one small script that reports on <body> what it drew (data-render,
// data-series-count, data-errors), for the headless-Chromium check (tests/timeline).
#pragma once

#include <string>

#include "plan/budget_sweep.h"

namespace memopt {

struct SweepPlotInput {
  std::string title;             ///< e.g. the model name
  const SweepResult* sweep = nullptr;
  std::vector<SweepPoint> references;
  bool flops = false;            ///< y = added FLOPs (else the cost model's time)
};

/// The SVG document (data-series-count = 1 + references on the root element).
std::string RenderSweepSvg(const SweepPlotInput& in);
/// An HTML page embedding RenderSweepSvg.
std::string RenderSweepHtml(const SweepPlotInput& in);

}  // namespace memopt
