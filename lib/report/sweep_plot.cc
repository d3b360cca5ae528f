#include "report/sweep_plot.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "report/timeline_escape.h"
#include "util/bytes.h"

namespace memopt {
namespace {

constexpr double kWidth = 760, kHeight = 460;
constexpr double kLeft = 90, kRight = 200, kTop = 50, kBottom = 60;  // margins; legend on the right
const char* const kColours[] = {"#d62728", "#2ca02c", "#9467bd", "#8c564b", "#e377c2"};

double YValue(const SweepPoint& p, bool flops) { return flops ? static_cast<double>(p.added_flops) : p.added_seconds; }

std::string YText(double y, bool flops) {
  if (flops) return fmt::format("{:.3g} GFLOP", y / 1e9);
  return fmt::format("{:.3g} ms", y * 1e3);
}

/// "Nice" axis ticks over [lo, hi].
std::vector<double> Ticks(double lo, double hi) {
  if (!(hi > lo)) hi = lo + 1;
  const double raw = (hi - lo) / 5;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    step = m * mag;
    if (raw <= step) break;
  }
  std::vector<double> ticks;
  for (double t = std::ceil(lo / step) * step; t <= hi + step * 1e-9; t += step) ticks.push_back(t);
  return ticks;
}

}  // namespace

std::string RenderSweepSvg(const SweepPlotInput& in) {
  const SweepResult& sweep = *in.sweep;
  std::vector<const SweepPoint*> all;
  for (const SweepPoint& p : sweep.points) all.push_back(&p);
  for (const SweepPoint& p : in.references) all.push_back(&p);
  double x_lo = static_cast<double>(sweep.lowest_peak), x_hi = static_cast<double>(sweep.unoptimized_peak);
  double y_hi = 0;
  for (const SweepPoint* p : all) {
    x_lo = std::min(x_lo, static_cast<double>(p->peak_bytes));
    x_hi = std::max(x_hi, static_cast<double>(p->peak_bytes));
    y_hi = std::max(y_hi, YValue(*p, in.flops));
  }
  const double x_pad = std::max(1.0, (x_hi - x_lo) * 0.05);
  x_lo = std::max(0.0, x_lo - x_pad);
  x_hi += x_pad;
  if (y_hi <= 0) y_hi = 1;
  y_hi *= 1.08;
  const double pw = kWidth - kLeft - kRight, ph = kHeight - kTop - kBottom;
  auto sx = [&](double x) { return kLeft + (x - x_lo) / (x_hi - x_lo) * pw; };
  auto sy = [&](double y) { return kTop + ph - y / y_hi * ph; };
  const int series = 1 + static_cast<int>(in.references.size());

  std::string out = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "font-family=\"sans-serif\" font-size=\"12\" data-series-count=\"{2}\">\n"
      "<rect width=\"{0}\" height=\"{1}\" fill=\"#ffffff\"/>\n"
      "<text x=\"{3}\" y=\"24\" font-size=\"15\" font-weight=\"bold\">{4}</text>\n",
      kWidth, kHeight, series, kLeft, XmlEscape("Peak memory vs added compute: " + in.title));
  // Axes and grid.
  // Byte ticks at round numbers of the unit the axis is read in (KiB, MiB, GiB, ...).
  static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int unit = 0;
  while (unit < 5 && x_hi >= 1024.0 * std::pow(1024.0, unit)) ++unit;
  const double scale = std::pow(1024.0, unit);
  for (double t : Ticks(x_lo / scale, x_hi / scale)) {
    out += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#e0e0e0\"/>"
                       "<text x=\"{0:.1f}\" y=\"{3}\" text-anchor=\"middle\">{4:g} {5}</text>\n",
                       sx(t * scale), kTop, kTop + ph, kTop + ph + 16, t, kUnits[unit]);
  }
  for (double t : Ticks(0, y_hi)) {
    out += fmt::format("<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"#e0e0e0\"/>"
                       "<text x=\"{3}\" y=\"{4:.1f}\" text-anchor=\"end\">{5}</text>\n",
                       kLeft, sy(t), kLeft + pw, kLeft - 6, sy(t) + 4, XmlEscape(YText(t, in.flops)));
  }
  out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#333\"/>\n", kLeft,
                     kTop, pw, ph);
  out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">planned peak memory</text>\n", kLeft + pw / 2,
                     kHeight - 18);
  out += fmt::format("<text transform=\"translate(18 {}) rotate(-90)\" text-anchor=\"middle\">{}</text>\n",
                     kTop + ph / 2, in.flops ? "added FLOPs" : "added compute time (cost model)");

  auto tooltip = [&](const SweepPoint& p) {
    std::string t = fmt::format("{}: peak {}, added {}", p.label, HumanBytes(p.peak_bytes), YText(YValue(p, in.flops), in.flops));
    if (p.budget_bytes > 0) t += fmt::format(", budget {}{}", HumanBytes(p.budget_bytes), p.met ? "" : " (not met)");
    if (!p.optimality.empty()) t += ", " + p.optimality;
    return XmlEscape(t);
  };
  // The budget plans: a line through the points in peak order.
  std::vector<const SweepPoint*> curve;
  for (const SweepPoint& p : sweep.points) curve.push_back(&p);
  std::sort(curve.begin(), curve.end(), [](const SweepPoint* a, const SweepPoint* b) { return a->peak_bytes < b->peak_bytes; });
  out += "<g class=\"series\" data-series=\"memopt budget plans\">\n<polyline fill=\"none\" stroke=\"#1f77b4\" "
         "stroke-width=\"2\" points=\"";
  for (const SweepPoint* p : curve) {
    out += fmt::format("{:.1f},{:.1f} ", sx(static_cast<double>(p->peak_bytes)), sy(YValue(*p, in.flops)));
  }
  out += "\"/>\n";
  for (const SweepPoint* p : curve) {
    out += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4\" fill=\"{}\" stroke=\"#1f77b4\"><title>{}</title></circle>\n",
                       sx(static_cast<double>(p->peak_bytes)), sy(YValue(*p, in.flops)), p->met ? "#1f77b4" : "#ffffff",
                       tooltip(*p));
  }
  out += "</g>\n";
  // References.
  for (size_t i = 0; i < in.references.size(); ++i) {
    const SweepPoint& p = in.references[i];
    const char* colour = kColours[i % (sizeof(kColours) / sizeof(kColours[0]))];
    const double x = sx(static_cast<double>(p.peak_bytes)), y = sy(YValue(p, in.flops));
    out += fmt::format("<g class=\"series\" data-series=\"{0}\"><path d=\"M {1:.1f} {2:.1f} l 6 6 l -6 6 l -6 -6 z\" "
                       "transform=\"translate(0 -6)\" fill=\"{3}\"><title>{4}</title></path></g>\n",
                       XmlEscape(p.label), x, y, colour, tooltip(p));
  }
  // Legend.
  double ly = kTop + 8;
  out += fmt::format("<g class=\"legend\"><circle cx=\"{}\" cy=\"{}\" r=\"4\" fill=\"#1f77b4\"/><text x=\"{}\" "
                     "y=\"{}\">memopt budget plans</text>\n",
                     kLeft + pw + 16, ly, kLeft + pw + 26, ly + 4);
  for (size_t i = 0; i < in.references.size(); ++i) {
    ly += 20;
    const char* colour = kColours[i % (sizeof(kColours) / sizeof(kColours[0]))];
    out += fmt::format("<path d=\"M {0} {1} l 5 5 l -5 5 l -5 -5 z\" fill=\"{2}\"/><text x=\"{3}\" y=\"{4}\">{5}</text>\n",
                       kLeft + pw + 16, ly - 5, colour, kLeft + pw + 26, ly + 4, XmlEscape(in.references[i].label));
  }
  out += "</g>\n</svg>\n";
  return out;
}

std::string RenderSweepHtml(const SweepPlotInput& in) {
  return fmt::format(R"(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{0}</title>
<style>body {{ font-family: sans-serif; margin: 16px; }} svg circle:hover, svg path:hover {{ stroke: #000; stroke-width: 2; }}</style>
</head>
<body data-render="pending" data-series-count="0" data-errors="0">
{1}<p>Hover a point for its peak, added compute, budget and optimality. Written by memopt plan --sweep.</p>
<script>
(function () {{
  var errors = 0;
  window.addEventListener("error", function () {{ errors++; document.body.setAttribute("data-errors", String(errors)); }});
  var series = document.querySelectorAll("svg g.series").length;
  document.body.setAttribute("data-series-count", String(series));
  document.body.setAttribute("data-render", "ok");
}})();
</script>
</body></html>
)",
                     XmlEscape("memopt sweep: " + in.title), RenderSweepSvg(in));
}

}  // namespace memopt
