#include "report/timeline_svg.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "report/timeline_escape.h"
#include "util/bytes.h"

namespace memopt {

namespace {

/// Plot geometry: data coordinates (step, bytes) to pixels.
struct Frame {
  double left = 0, right = 0, top = 0, bottom = 0;
  double steps = 1;
  double ymax = 1;
  double X(double step) const { return left + step / steps * (right - left); }
  double Y(double bytes) const { return bottom - bytes / ymax * (bottom - top); }
};

std::string Num(double v) {
  std::string s = fmt::format("{:.1f}", v);
  if (s.size() > 2 && s.compare(s.size() - 2, 2, ".0") == 0) s.resize(s.size() - 2);
  if (s == "-0") s = "0";
  return s;
}

/// A 1-2-5 step of at least `raw`.
double NiceStep(double raw) {
  if (raw <= 0) return 1;
  const double p = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * p >= raw * (1 - 1e-9)) return m * p;
  }
  return 10 * p;
}

struct ByteTicks {
  double step = 1;   ///< bytes between ticks
  double unit = 1;   ///< 1, 1024, 1024^2, ...
  const char* unit_name = "B";
};

ByteTicks ChooseByteTicks(double max_bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  ByteTicks t;
  int u = 0;
  while (u < 5 && max_bytes >= t.unit * 1024) {
    t.unit *= 1024;
    ++u;
  }
  t.unit_name = kUnits[u];
  double step = NiceStep(max_bytes / t.unit / 5);
  if (u == 0) step = std::max(step, 1.0);
  t.step = step * t.unit;
  return t;
}

std::string TickLabel(double value, const ByteTicks& t) {
  if (value == 0) return "0";
  return fmt::format("{:g} {}", value / t.unit, t.unit_name);
}

/// A horizontal step curve through the buckets' `values` ("H x V y" runs, equal levels merged).
void AppendSteps(std::string& d, const Frame& f, const std::vector<TimelineBucket>& buckets,
                 const std::vector<int64_t>& values, bool reverse) {
  const size_t n = buckets.size();
  std::string last_y;
  for (size_t j = 0; j < n; ++j) {
    const size_t i = reverse ? n - 1 - j : j;
    const std::string y = Num(f.Y(static_cast<double>(values[i])));
    const double x_end = reverse ? buckets[i].first : buckets[i].last + 1;
    const bool more_same = j + 1 < n && Num(f.Y(static_cast<double>(values[reverse ? i - 1 : i + 1]))) == y;
    if (y != last_y) d += "V" + y;
    last_y = y;
    if (!more_same) d += "H" + Num(f.X(x_end));
  }
}

/// Stacked area of kind k: the upper edge left to right, then the lower edge back.
std::string StackPath(const Frame& f, const std::vector<TimelineBucket>& b, int k) {
  std::vector<int64_t> lower(b.size(), 0), upper(b.size(), 0);
  for (size_t i = 0; i < b.size(); ++i) {
    for (int j = 0; j < k; ++j) lower[i] += b[i].at_rep[j];
    upper[i] = lower[i] + b[i].at_rep[k];
  }
  std::string d = "M" + Num(f.X(b.front().first)) + "," + Num(f.Y(static_cast<double>(lower.front())));
  AppendSteps(d, f, b, upper, false);
  AppendSteps(d, f, b, lower, true);
  return d + "Z";
}

std::string LinePath(const Frame& f, const std::vector<TimelineBucket>& b, bool use_min) {
  std::vector<int64_t> v(b.size());
  for (size_t i = 0; i < b.size(); ++i) v[i] = use_min ? b[i].min_total : b[i].max_total;
  std::string d = "M" + Num(f.X(b.front().first)) + "," + Num(f.Y(static_cast<double>(v.front())));
  AppendSteps(d, f, b, v, false);
  return d;
}

std::string Text(double x, double y, const std::string& text, const char* attrs) {
  return fmt::format("<text x=\"{}\" y=\"{}\" {}>{}</text>\n", Num(x), Num(y), attrs, XmlEscape(text));
}

std::string Shorten(const std::string& s, size_t max) { return s.size() <= max ? s : s.substr(0, max - 3) + "..."; }

void AppendPeakMarker(std::string& out, const Frame& f, const TimelineData& t, const char* color,
                      const std::string& label) {
  if (t.peak_position < 0) return;
  const double x = f.X(t.peak_position + 0.5);
  const double y = f.Y(static_cast<double>(t.peak_bytes));
  const bool right_half = x > (f.left + f.right) / 2;
  out += fmt::format("<g class=\"peak\"><title>{}</title>\n", XmlEscape(label + ": " + TimelinePeakText(t)));
  out += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"{3}\" stroke-dasharray=\"3,3\"/>\n",
                     Num(x), Num(y), Num(f.bottom), color);
  out += fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"4\" fill=\"{}\" stroke=\"#fff\"/>\n", Num(x), Num(y), color);
  const Node& node = t.graph->node(t.peak_node);
  const std::string text = fmt::format("{} {} at {} ({})", label, HumanBytes(t.peak_bytes),
                                       Shorten(node.name, 48), node.op_type);
  out += Text(right_half ? x - 8 : x + 8, std::max(y - 8, f.top + 12), text,
              right_half ? "text-anchor=\"end\" class=\"mark\"" : "class=\"mark\"");
  out += "</g>\n";
}

}  // namespace

std::string RenderTimelineSvg(const TimelineView& view, const SvgTimelineOptions& options) {
  const TimelineData& orig = *view.original;
  const TimelineData* rew = view.rewritten;
  const int W = options.width, H = options.height;
  Frame f;
  f.left = 84;
  f.right = W - 24;
  f.top = 96;
  f.bottom = H - 46;
  const size_t max_points = std::min(options.max_points, static_cast<size_t>(std::max(1.0, f.right - f.left)));
  const std::vector<TimelineBucket> ob = AggregateTimeline(orig, max_points);
  const std::vector<TimelineBucket> rb = rew ? AggregateTimeline(*rew, max_points) : std::vector<TimelineBucket>{};
  f.steps = std::max<double>({1.0, static_cast<double>(orig.steps()), rew ? static_cast<double>(rew->steps()) : 0});
  const double top_bytes = std::max<double>({1.0, static_cast<double>(orig.peak_bytes),
                                             rew ? static_cast<double>(rew->peak_bytes) : 0.0});
  const ByteTicks ticks = ChooseByteTicks(top_bytes * 1.08);
  f.ymax = std::ceil(top_bytes * 1.08 / ticks.step) * ticks.step;

  std::string out;
  out += fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "font-family=\"sans-serif\" font-size=\"12\" data-series-count=\"{2}\">\n",
      W, H, TimelineSeriesCount(view));
  out += "<style>.axis{fill:#444}.mark{font-size:11px;fill:#222}.sub{fill:#555}.grid{stroke:#e3e6ea}</style>\n";
  out += fmt::format("<title>{}</title>\n", XmlEscape(view.title));
  out += fmt::format("<rect width=\"{}\" height=\"{}\" fill=\"#fff\"/>\n", W, H);
  out += Text(16, 22, view.title, "font-size=\"15\" font-weight=\"bold\"");
  std::string sub = view.subtitle;
  const std::string unbound = TimelineUnboundText(orig);
  if (!unbound.empty()) sub += (sub.empty() ? "" : "; ") + unbound;
  out += Text(16, 40, sub, "class=\"sub\"");
  std::string peak_line = "peak " + TimelinePeakText(orig);
  if (rew) {
    const double change = orig.peak_bytes > 0 ? 100.0 * (static_cast<double>(rew->peak_bytes) - orig.peak_bytes) /
                                                    static_cast<double>(orig.peak_bytes)
                                              : 0.0;
    peak_line = fmt::format("{} peak {}; {} peak {} ({:+.1f}%)", view.original_label, HumanBytes(orig.peak_bytes),
                            view.rewritten_label, HumanBytes(rew->peak_bytes), change);
  }
  out += Text(16, 58, peak_line, "class=\"sub\"");

  // Legend.
  double lx = 16;
  for (int k = 0; k < kNumLiveKinds; ++k) {
    const LiveKind kind = static_cast<LiveKind>(k);
    out += fmt::format("<rect x=\"{}\" y=\"70\" width=\"12\" height=\"12\" fill=\"{}\"/>\n", Num(lx),
                       LiveKindColor(kind));
    std::string label = LiveKindLabel(kind);
    if (rew) label = view.original_label + ": " + label;
    out += Text(lx + 16, 80, label, "");
    lx += 28 + 6.6 * static_cast<double>(label.size());
  }
  if (rew) {
    out += fmt::format("<line x1=\"{0}\" y1=\"76\" x2=\"{1}\" y2=\"76\" stroke=\"{2}\" stroke-width=\"2.5\"/>\n",
                       Num(lx), Num(lx + 14), kOverlayColor);
    out += Text(lx + 18, 80, view.rewritten_label + " (total)", "");
  }

  // Grid and axes.
  out += "<g class=\"axis\">\n";
  for (double v = 0; v <= f.ymax * (1 + 1e-9); v += ticks.step) {
    const std::string y = Num(f.Y(v));
    out += fmt::format("<line class=\"grid\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>\n", Num(f.left), y,
                       Num(f.right), y);
    out += Text(f.left - 6, f.Y(v) + 4, TickLabel(v, ticks), "text-anchor=\"end\"");
  }
  const double xstep = std::max(1.0, NiceStep(f.steps / 8));
  for (double s = 0; s <= f.steps * (1 + 1e-9); s += xstep) {
    out += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#888\"/>\n", Num(f.X(s)),
                       Num(f.bottom), Num(f.bottom + 4));
    out += Text(f.X(s), f.bottom + 17, fmt::format("{:.0f}", s), "text-anchor=\"middle\"");
  }
  out += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"#888\"/>\n", Num(f.left),
                     Num(f.bottom), Num(f.right));
  out += Text((f.left + f.right) / 2, H - 8, "execution order (step)", "text-anchor=\"middle\"");
  out += fmt::format("<text transform=\"translate(16,{}) rotate(-90)\" text-anchor=\"middle\">live bytes</text>\n",
                     Num((f.top + f.bottom) / 2));
  out += "</g>\n";

  // Data.
  if (!ob.empty()) {
    for (int k = 0; k < kNumLiveKinds; ++k) {
      const LiveKind kind = static_cast<LiveKind>(k);
      out += fmt::format("<path class=\"series {}\" fill=\"{}\" d=\"{}\"><title>{}</title></path>\n",
                         LiveKindKey(kind), LiveKindColor(kind), StackPath(f, ob, k), LiveKindLabel(kind));
    }
    if (ob.size() < orig.steps()) {
      out += fmt::format("<path class=\"envelope\" fill=\"none\" stroke=\"#333\" stroke-width=\"0.6\" "
                         "stroke-opacity=\"0.6\" d=\"{}\"><title>lowest total in each bucket of {} steps</title>"
                         "</path>\n",
                         LinePath(f, ob, true), ob.front().last - ob.front().first + 1);
    }
  }
  if (!rb.empty()) {
    out += fmt::format("<path class=\"series overlay\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\" d=\"{}\">"
                       "<title>{} (total)</title></path>\n",
                       kOverlayColor, LinePath(f, rb, false), XmlEscape(view.rewritten_label));
  }

  // Forward/backward boundary.
  if (orig.last_forward >= 0 && orig.last_forward + 1 < static_cast<int32_t>(orig.steps())) {
    const double x = f.X(orig.last_forward + 1);
    out += fmt::format("<line class=\"boundary\" x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#555\" "
                       "stroke-dasharray=\"6,4\"/>\n",
                       Num(x), Num(f.top), Num(f.bottom));
    out += Text(x - 6, f.top + 12, "forward", "text-anchor=\"end\" class=\"mark\"");
    out += Text(x + 6, f.top + 12, "backward", "class=\"mark\"");
  }
  AppendPeakMarker(out, f, orig, "#222", rew ? view.original_label + " peak" : "peak");
  if (rew) AppendPeakMarker(out, f, *rew, kOverlayColor, view.rewritten_label + " peak");
  out += "</svg>\n";
  return out;
}

}  // namespace memopt
