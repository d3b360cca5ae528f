#include "plan/budget_sweep.h"

#include <catch2/catch.hpp>

#include "plan/layer_checkpoint.h"
#include "helpers/plan_test_util.h"
#include "report/sweep_plot.h"
#include "test_data.h"

namespace memopt {
namespace {

testing::Scanned TinyGpt2() {
  return testing::ScanFile(testing::SourcePath("tests/data/plan/gpt2_tiny_2layer.onnx"), 1, "batch=4,seq_len=64");
}

TEST_CASE("budget sweep: budgets from the unoptimized peak to the lowest, each plan within its budget", "[plan][sweep]") {
  testing::Scanned s = TinyGpt2();
  Expected<PlanEvaluator> ev = PlanEvaluator::Create(s.model.graph, s.scan, s.dims);
  REQUIRE(ev.ok());
  SweepOptions options;
  options.plan.candidates = BudgetCandidates(s.scan, 1, ev->spec_builder());
  options.points = 6;
  Expected<SweepResult> sweep = SweepBudgets(*ev, options);
  REQUIRE(sweep.ok());
  REQUIRE(sweep->points.size() == 6);
  CHECK(sweep->unoptimized_peak == s.scan.peak.peak_bytes);
  Expected<PlanEvaluation> all = ev->Evaluate(options.plan.candidates);
  REQUIRE(all.ok());
  // The lowest peak is at most every candidate's (a subset can avoid some recompute transients).
  CHECK(sweep->lowest_peak <= all->peak_bytes);
  // The first budget is the unoptimized peak: no plan; the last the lowest peak found.
  CHECK(sweep->points.front().budget_bytes == sweep->unoptimized_peak);
  CHECK(sweep->points.front().added_flops == 0);
  CHECK(sweep->points.back().budget_bytes == sweep->lowest_peak);
  for (size_t i = 0; i < sweep->points.size(); ++i) {
    const SweepPoint& p = sweep->points[i];
    INFO("point " << i << " budget " << p.budget_bytes << " peak " << p.peak_bytes);
    CHECK(p.met);
    CHECK(p.peak_bytes <= p.budget_bytes);
    if (i > 0) CHECK(p.budget_bytes < sweep->points[i - 1].budget_bytes);
  }
  // The plot: one series for the budget plans plus one per reference, a point per budget.
  SweepPlotInput plot{"tiny", &*sweep, {ReferencePoint("ORT level 1", *all)}, false};
  const std::string svg = RenderSweepSvg(plot);
  CHECK(svg.find("data-series-count=\"2\"") != std::string::npos);
  size_t circles = 0;
  for (size_t at = svg.find("<title>budget "); at != std::string::npos; at = svg.find("<title>budget ", at + 1)) {
    ++circles;
  }
  CHECK(circles == 6);
  CHECK(svg.find("<title>ORT level 1: peak ") != std::string::npos);
  const std::string html = RenderSweepHtml(plot);
  CHECK(html.find("data-render=\"pending\"") != std::string::npos);
  CHECK(html.find("http://") == html.find("http://www.w3.org/2000/svg"));  // no network resource
}

TEST_CASE("budget sweep: one point when no plan lowers the peak", "[plan][sweep]") {
  // Level 1's only plan raises this graph's peak (tests/data/plan/peak_raising_level1.onnx).
  testing::Scanned s = testing::ScanFile(testing::SourcePath("tests/data/plan/peak_raising_level1.onnx"), 1, "");
  Expected<PlanEvaluator> ev = PlanEvaluator::Create(s.model.graph, s.scan, s.dims);
  REQUIRE(ev.ok());
  SweepOptions options;
  options.plan.candidates = BudgetCandidates(s.scan, 1, ev->spec_builder());
  REQUIRE_FALSE(options.plan.candidates.empty());
  Expected<SweepResult> sweep = SweepBudgets(*ev, options);
  REQUIRE(sweep.ok());
  CHECK(sweep->lowest_peak == sweep->unoptimized_peak);
  REQUIRE(sweep->points.size() == 1);
  CHECK(sweep->points[0].budget_bytes == sweep->unoptimized_peak);
  CHECK(sweep->points[0].nodes_added == 0);
  CHECK(sweep->points[0].met);
}

TEST_CASE("per-block checkpointing: every stash inside a layer recomputed, the layer inputs kept", "[plan][sweep]") {
  testing::Scanned s = TinyGpt2();
  const ScanResult layers = LayerCheckpointScan(s.model.graph, s.scan);
  REQUIRE_FALSE(layers.plans.empty());
  REQUIRE(s.scan.layer_boundaries.size() == 2);
  for (size_t i = 0; i < layers.plans.size(); ++i) {
    const RecomputePlan& p = layers.plans[i];
    if (i > 0) CHECK(layers.order.position[p.entry] < layers.order.position[layers.plans[i - 1].entry]);
    CHECK(p.subgraph.back() == p.entry);
    for (NodeId b : s.scan.layer_boundaries) {
      // The layer input (a boundary LayerNorm's input 0) is never recomputed.
      const ValueId input = s.model.graph.nodes[b].inputs[0];
      for (const StashedOutput& o : p.outputs) CHECK(o.value != input);
    }
  }
  Expected<PlanEvaluator> ev = PlanEvaluator::Create(s.model.graph, layers, s.dims);
  REQUIRE(ev.ok());
  std::vector<size_t> all(layers.plans.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = i;
  Expected<PlanEvaluation> e = ev->Evaluate(all);
  REQUIRE(e.ok());
  CHECK(e->peak_bytes < s.scan.peak.peak_bytes);
  CHECK(e->nodes_added > 0);
  // Every cloned node is a forward node of a layer: no clone of the embedding or the loss.
  std::vector<int32_t> starts;
  for (NodeId b : s.scan.layer_boundaries) starts.push_back(s.scan.order.position[b]);
  for (const RecomputePlan& p : layers.plans) {
    for (NodeId n : p.subgraph) CHECK(s.scan.order.position[n] >= starts.front());
  }
}

}  // namespace
}  // namespace memopt
