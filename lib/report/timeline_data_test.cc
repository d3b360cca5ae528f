#include "report/timeline_data.h"

#include <catch2/catch.hpp>

#include "helpers/analysis_test_util.h"
#include "test_data.h"

namespace memopt {
namespace {

// mul and relu are forward (--boundary relu), sigmoid and the second Mul backward.
constexpr const char* kGraph = R"(
    <ir_version: 8, opset_import: ["" : 15]>
    g (float[N, 4] x, float[4] w) => (float[N, 4] y, float[N, 4] w_grad) {
      a = Mul(x, w)
      y = Relu(a)
      d = Sigmoid(y)
      w_grad = Mul(d, a)
    })";

ScanResult ScanWithBoundary(const Graph& graph, const std::string& boundary, const DimBindings& dims) {
  ScanOptions options;
  options.boundary_node = boundary;
  options.dims = dims;
  Expected<ScanResult> r = Scan(graph, options);
  INFO(r.status().message());
  REQUIRE(r.ok());
  return std::move(r).value();
}

std::vector<int64_t> Series(const TimelineData& t, LiveKind kind) { return t.live[static_cast<int>(kind)]; }

TEST_CASE("timeline: hand-checked live bytes by kind", "[report][timeline]") {
  Model m = testing::TextModel(kGraph, {"mul", "relu", "sigmoid", "mul_grad"});
  DimBindings dims;
  dims.Set("N", 10);
  ScanResult scan = ScanWithBoundary(m.graph, "relu", dims);
  REQUIRE(testing::NodeNames(m.graph, scan.order.order) ==
          std::vector<std::string>{"mul", "relu", "sigmoid", "mul_grad"});
  REQUIRE(scan.order.last_forward == 1);
  TimelineData t = ComputeGraphTimeline(m.graph, scan.order, dims);

  // N = 10: fp32 [N,4] = 160 B, w = 16 B. Always live: x + w = 176.
  // step 0 mul:      +a 160 (stashed: mul_grad reads it)        -> 336; nothing freed  -> 336
  // step 1 relu:     +y 160 (stashed: sigmoid reads it; output) -> 496                 -> 496
  // step 2 sigmoid:  +d 160 (transient)                         -> 656                 -> 656
  // step 3 mul_grad: +w_grad 160 (gradient: backward output)    -> 816 (peak); frees a, d -> 496
  CHECK(t.sized);
  CHECK(t.steps() == 4);
  CHECK(Series(t, LiveKind::kWeightsAndInputs) == std::vector<int64_t>{176, 176, 176, 176});
  CHECK(Series(t, LiveKind::kStashed) == std::vector<int64_t>{160, 320, 320, 320});
  CHECK(Series(t, LiveKind::kTransient) == std::vector<int64_t>{0, 0, 160, 160});
  CHECK(Series(t, LiveKind::kGradients) == std::vector<int64_t>{0, 0, 0, 160});
  CHECK(t.live_after == std::vector<int64_t>{336, 496, 656, 496});
  CHECK(t.peak_bytes == 816);
  CHECK(t.peak_position == 3);
  CHECK(t.peak_node == testing::NodeByName(m.graph, "mul_grad"));
  // The same numbers as the analysis's own estimate.
  CHECK(t.peak_bytes == scan.peak.peak_bytes);
  CHECK(t.live_after == scan.peak.live_after_step);
  CHECK(t.value_kind[m.graph.FindValue("w_grad")] == static_cast<int8_t>(LiveKind::kGradients));
  CHECK(t.value_kind[m.graph.FindValue("x")] == static_cast<int8_t>(LiveKind::kWeightsAndInputs));
  // Live at the peak, biggest first, ties by value id.
  REQUIRE(t.live_at_peak.size() == 6);
  CHECK(m.graph.value(t.live_at_peak.back().value).name == "w");
  CHECK(t.live_at_peak.back().bytes == 16);
}

TEST_CASE("timeline: unbound dims count 1024 and are listed", "[report][timeline]") {
  Model m = testing::TextModel(kGraph, {"mul", "relu", "sigmoid", "mul_grad"});
  ScanResult scan = ScanWithBoundary(m.graph, "relu", DimBindings{});
  TimelineData t = ComputeGraphTimeline(m.graph, scan.order, DimBindings{});
  CHECK_FALSE(t.sized);
  CHECK(t.unbound_dims == std::vector<std::string>{"N"});
  CHECK(t.peak_bytes == 5 * 16 * 1024 + 16);
  CHECK(t.peak_position == scan.peak.peak_position);
}

TEST_CASE("timeline: aggregation keeps the peak and splits at the boundary", "[report][timeline]") {
  TimelineData t;
  t.order.resize(10);
  t.last_forward = 4;
  const std::vector<int64_t> totals = {1, 5, 2, 3, 4, 9, 1, 1, 7, 2};
  for (auto& s : t.live) s.assign(10, 0);
  t.live[static_cast<int>(LiveKind::kTransient)] = totals;
  std::vector<TimelineBucket> b = AggregateTimeline(t, 3);  // width 4, split before step 5
  REQUIRE(b.size() == 4);
  CHECK((b[0].first == 0 && b[0].last == 3 && b[0].rep == 1 && b[0].max_total == 5 && b[0].min_total == 1));
  CHECK((b[1].first == 4 && b[1].last == 4 && b[1].rep == 4 && b[1].max_total == 4));
  CHECK((b[2].first == 5 && b[2].last == 7 && b[2].rep == 5 && b[2].max_total == 9 && b[2].min_total == 1));
  CHECK((b[3].first == 8 && b[3].last == 9 && b[3].rep == 8 && b[3].max_total == 7 && b[3].min_total == 2));
  CHECK(b[2].at_rep[static_cast<int>(LiveKind::kTransient)] == 9);

  std::vector<TimelineBucket> all = AggregateTimeline(t, 100);
  REQUIRE(all.size() == 10);
  for (size_t i = 0; i < all.size(); ++i) CHECK((all[i].first == static_cast<int32_t>(i) && all[i].rep == all[i].first));
}

TEST_CASE("timeline: equals the peak estimate on the real graphs", "[report][timeline][data]") {
  for (const char* name : {"ort_recompute/recompute_gelu.onnx", "ort_recompute/recompute_tile.onnx",
                           "ort_recompute/3layer_bloom_optimized_training.onnx"}) {
    auto path = testing::SharedData(name);
    if (!path) return;
    INFO(name);
    Model m = testing::LoadShaped(*path);
    for (bool bind : {false, true}) {
      DimBindings dims;
      if (bind) {
        for (const Value& v : m.graph.values) {
          if (!v.info.shape) continue;
          for (const SymExpr& d : *v.info.shape) {
            for (const std::string& s : d.Symbols()) dims.Set(s, 8);
          }
        }
      }
      ScanOptions options;
      options.dims = dims;
      ScanResult scan = Scan(m.graph, options).value();
      TimelineData t = ComputeGraphTimeline(m.graph, scan.order, dims);
      CHECK(t.sized == scan.peak.sized);
      CHECK(t.peak_bytes == scan.peak.peak_bytes);
      CHECK(t.peak_position == scan.peak.peak_position);
      CHECK(t.unsized_values == scan.peak.unsized_values);
      if (scan.peak.sized) CHECK(t.live_after == scan.peak.live_after_step);
      CHECK(t.live[static_cast<int>(LiveKind::kWeightsAndInputs)][0] == scan.peak.weights_and_inputs_bytes);
      if (scan.peak.sized) {
        CHECK(t.live[static_cast<int>(LiveKind::kStashed)][t.peak_position] == scan.peak.stashed_bytes_at_peak);
      }
    }
  }
}

}  // namespace
}  // namespace memopt
