#include "report/timeline_render.h"

#include <catch2/catch.hpp>

#include "helpers/analysis_test_util.h"
#include "report/timeline_escape.h"
#include "report/timeline_html.h"
#include "report/timeline_svg.h"

namespace memopt {
namespace {

constexpr const char* kGraph = R"(
    <ir_version: 8, opset_import: ["" : 15]>
    g (float[N, 4] x, float[4] w) => (float[N, 4] y, float[N, 4] w_grad) {
      a = Mul(x, w)
      y = Relu(a)
      d = Sigmoid(y)
      w_grad = Mul(d, a)
    })";

struct Fixture {
  Model model = testing::TextModel(kGraph, {"mul", "relu", "sigmoid", "mul_</grad>"});
  DimBindings dims;
  ScanResult scan;
  TimelineData data;
  Fixture() {
    dims.Set("N", 10);
    ScanOptions options;
    options.boundary_node = "relu";
    options.dims = dims;
    scan = Scan(model.graph, options).value();
    data = ComputeGraphTimeline(model.graph, scan.order, dims);
  }
};

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1)) ++n;
  return n;
}

TEST_CASE("timeline render: format from the file name", "[report][timeline]") {
  CHECK(TimelineFormatForPath("a/b.HTML").value() == TimelineFormat::kHtml);
  CHECK(TimelineFormatForPath("t.htm").value() == TimelineFormat::kHtml);
  CHECK(TimelineFormatForPath("t.svg").value() == TimelineFormat::kSvg);
  CHECK(TimelineFormatForPath("-").value() == TimelineFormat::kSvg);
  Expected<TimelineFormat> bad = TimelineFormatForPath("t.png");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().code() == ErrorCode::kUsage);
  CHECK(bad.status().message().find("t.png") != std::string::npos);
}

TEST_CASE("timeline render: SVG draws four kinds, the peak and the boundary", "[report][timeline]") {
  Fixture f;
  TimelineView view;
  view.title = "memopt scan <tiny> & co";
  view.original = &f.data;
  const std::string svg = RenderTimelineSvg(view);
  CHECK(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0) == 0);
  CHECK(svg.find("data-series-count=\"4\"") != std::string::npos);
  CHECK(Count(svg, "<path class=\"series ") == 4);
  CHECK(Count(svg, "class=\"boundary\"") == 1);
  CHECK(svg.find("peak 816 B at mul_&lt;/grad&gt; (Mul)") != std::string::npos);
  CHECK(svg.find("memopt scan &lt;tiny&gt; &amp; co") != std::string::npos);
  CHECK(svg.find("class=\"envelope\"") == std::string::npos);  // 4 steps: not aggregated
  CHECK(svg == RenderTimelineSvg(view));                         // deterministic

  // Overlay: one more series, two peak markers.
  TimelineData rewritten = f.data;
  for (auto& v : rewritten.live[static_cast<int>(LiveKind::kStashed)]) v /= 2;
  rewritten.peak_bytes -= 160;
  view.rewritten = &rewritten;
  const std::string overlay = RenderTimelineSvg(view);
  CHECK(overlay.find("data-series-count=\"5\"") != std::string::npos);
  CHECK(Count(overlay, "<path class=\"series ") == 5);
  CHECK(Count(overlay, "<g class=\"peak\">") == 2);
  CHECK(overlay.find("original peak 816 B; rewritten peak 656 B (-19.6%)") != std::string::npos);
}

TEST_CASE("timeline render: HTML is self-contained with escaped data", "[report][timeline]") {
  Fixture f;
  TimelineView view;
  view.title = "memopt scan tiny";
  view.original = &f.data;
  const std::string html = RenderTimelineHtml(view);
  CHECK(html.rfind("<!DOCTYPE html>", 0) == 0);
  // No external resources: nothing is loaded from anywhere.
  CHECK(html.find(" src=") == std::string::npos);
  CHECK(html.find("<link") == std::string::npos);
  CHECK(html.find("https://") == std::string::npos);
  CHECK(html.find("@import") == std::string::npos);
  // The node name "mul_</grad>" cannot end the data script early.
  CHECK(html.find("mul_<\\/grad>") != std::string::npos);
  CHECK(Count(html, "</script>") == 2);
  nlohmann::json j = TimelineToJson(view);
  CHECK(j["series_count"] == 4);
  REQUIRE(j["timelines"].size() == 1);
  const auto& t = j["timelines"][0];
  CHECK(t["steps"] == 4);
  CHECK(t["last_forward"] == 1);
  CHECK(t["peak"]["bytes"] == 816);
  CHECK(t["peak"]["node"] == "mul_</grad>");
  CHECK(t["first"] == std::vector<int>{0, 1, 2, 3});
  CHECK(t["kinds"][1] == std::vector<int64_t>{160, 320, 320, 320});
  CHECK(t["aggregated"] == false);
  // Hover rows: node, op, largest outputs (tensor, type, bytes, kind), output count.
  const auto& node = j["nodes"][t["node"][3].get<int>()];
  CHECK(node[0] == "mul_</grad>");
  CHECK(node[2][0][0] == "w_grad");
  CHECK(node[2][0][1] == "float[N, 4]");
  CHECK(node[2][0][2] == 160);
  CHECK(node[2][0][3] == static_cast<int>(LiveKind::kGradients));
}

TEST_CASE("timeline render: long orders are aggregated", "[report][timeline]") {
  // A synthetic order of 20,000 steps over one graph node (only names are looked up).
  Fixture f;
  TimelineData big;
  big.graph = &f.model.graph;
  const int n = 20000;
  big.order.assign(n, f.data.order[0]);
  big.last_forward = n / 2 - 1;
  for (auto& s : big.live) s.assign(n, 0);
  for (int i = 0; i < n; ++i) big.live[static_cast<int>(LiveKind::kTransient)][i] = (i * 7919) % 1000;
  big.live[static_cast<int>(LiveKind::kTransient)][12345] = 5000;
  big.peak_bytes = 5000;
  big.peak_position = 12345;
  big.peak_node = f.data.order[0];
  TimelineView view;
  view.original = &big;
  const nlohmann::json j = TimelineToJson(view);
  const auto& t = j["timelines"][0];
  CHECK(t["aggregated"] == true);
  CHECK(t["first"].size() <= kHtmlTimelinePoints + 1);
  int64_t max_total = 0;
  for (const auto& v : t["kinds"][2]) max_total = std::max<int64_t>(max_total, v.get<int64_t>());
  CHECK(max_total == 5000);
  const std::string svg = RenderTimelineSvg(view);
  CHECK(svg.find("class=\"envelope\"") != std::string::npos);
  CHECK(svg.size() < 200000);
}

TEST_CASE("timeline escape: XML and script-safe JSON", "[report][timeline]") {
  CHECK(XmlEscape("a<b>&\"c'") == "a&lt;b&gt;&amp;&quot;c&#39;");
  CHECK(JsonForScript("\"</script>\"") == "\"<\\/script>\"");
  CHECK(JsonForScript("\"a\xE2\x80\xA8" "b\"") == "\"a\\u2028b\"");
}

}  // namespace
}  // namespace memopt
