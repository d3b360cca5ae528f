#include "plan/plan_evaluator.h"

#include <random>

#include <catch2/catch.hpp>

#include "helpers/plan_test_util.h"
#include "test_data.h"

namespace memopt {
namespace {

/// The fast evaluation equals the exact peak of the graph `apply` writes, for random selections.
void CheckAgainstExact(const testing::Scanned& s, int subsets) {
  Expected<PlanEvaluator> ev = PlanEvaluator::Create(s.model.graph, s.scan, s.dims);
  REQUIRE(ev.ok());
  std::vector<size_t> all;
  for (size_t i = 0; i < s.scan.plans.size(); ++i) {
    if (ev->spec_builder().Supported(i)) all.push_back(i);
  }
  std::mt19937 rng(1234);
  std::vector<std::vector<size_t>> selections = {{}, all};
  for (int k = 0; k < subsets; ++k) {
    std::vector<size_t> pick;
    for (size_t p : all) {
      if (rng() % 2) pick.push_back(p);
    }
    selections.push_back(pick);
  }
  for (const std::vector<size_t>& pick : selections) {
    Expected<PlanEvaluation> fast = ev->Evaluate(pick);
    REQUIRE(fast.ok());
    PlanOutcome exact = testing::Outcome(s, pick);
    INFO("selection of " << pick.size() << " plans");
    CHECK(fast->peak_bytes == exact.peak.peak_bytes);
    CHECK(fast->peak_position == exact.peak.peak_position);
    CHECK(fast->added_flops == exact.added_flops);
    CHECK(fast->nodes_added == exact.nodes_added);
    CHECK(ev->CostOf(pick) == Approx(fast->added_seconds));
  }
  // No plan: the scan's own estimate.
  Expected<PlanEvaluation> none = ev->Evaluate({});
  REQUIRE(none.ok());
  CHECK(none->peak_bytes == s.scan.peak.peak_bytes);
}

void CheckCasesAgainstExact(const std::vector<testing::GraphCase>& cases) {
  testing::ForEachScanAtEveryLevel(cases, [](const testing::Scanned& s) { CheckAgainstExact(s, 12); });
}

TEST_CASE("plan evaluator: fast peak equals the exact peak of the rewritten graph", "[plan][evaluator]") {
  CheckCasesAgainstExact({
      {"ort_recompute/recompute_gelu.onnx", "input1_dim0=16,input1_dim1=784"},
      {"ort_recompute/recompute_gelu.onnx", ""},
      {"ort_recompute/recompute_tile.onnx", ""},
      {"ort_recompute/3layer_bloom_optimized_training.onnx", "inputs_input_ids_dim0=2,inputs_attention_mask_dim1=32"},
      {"ort_training_api/training_model.onnx", ""},
  });
}

TEST_CASE("plan evaluator: fast peak equals the exact peak of the rewritten tiny GPT-2 (source tree)",
          "[plan][evaluator]") {
  CheckCasesAgainstExact({{"src:tests/data/plan/gpt2_tiny_2layer.onnx", "batch=2,seq_len=8"}});
}

TEST_CASE("plan evaluator: hand-checked peak of a tiny chain", "[plan][evaluator]") {
  // Forward a = Neg(x) (16 B), b = Sin(a) (16 B); backward reads a and b. The peak (step of
  // g1) holds x (16) + a + b + y + g1 = 80 B. Recomputing b frees it from the forward to the
  // backward step that needs it; its clone reads a.
  Model m = testing::NamedTextModel(R"(
    <ir_version: 8, opset_import: ["" : 15, "com.microsoft" : 1]>
    g (float[4] x) => (float[4] gx) {
      a = Neg(x)
      b = Sin(a)
      y = com.microsoft.YieldOp <full_shape_outputs = [0]> (b)
      g1 = Mul(y, b)
      gx = Mul(g1, a)
    })",
                                    {"neg", "sin", "yield", "mul_b", "mul_a"});
  testing::Scanned s = testing::ScanModel(std::move(m), 0);
  Expected<PlanEvaluator> ev = PlanEvaluator::Create(s.model.graph, s.scan, s.dims);
  REQUIRE(ev.ok());
  CHECK(ev->weights_and_inputs_bytes() == 16);
  Expected<PlanEvaluation> none = ev->Evaluate({}, /*want_curve=*/true);
  REQUIRE(none.ok());
  // Steps: neg (x+a), sin (+b), yield (+y), mul_b (+g1: x a b y g1 = 80), mul_a (x a g1 gx = 64).
  CHECK(none->live_at_step == std::vector<int64_t>{32, 48, 64, 80, 64});
  CHECK(none->peak_bytes == 80);
  size_t sin_plan = s.scan.plans.size();
  for (size_t i = 0; i < s.scan.plans.size(); ++i) {
    if (s.model.graph.nodes[s.scan.plans[i].entry].name == "sin") sin_plan = i;
  }
  REQUIRE(sin_plan < s.scan.plans.size());
  Expected<PlanEvaluation> with = ev->Evaluate({sin_plan}, true);
  REQUIRE(with.ok());
  // neg (x a), sin (x a b), yield (x a b y; b freed: its only reader now is the yield), clone
  // (x a y b'), mul_b (x a y b' g1 = 80), mul_a.
  CHECK(with->live_at_step == std::vector<int64_t>{32, 48, 64, 64, 80, 64});
  CHECK(with->nodes_added == 1);
  CHECK(with->added_flops == 16);  // Sin: 4 FLOPs per element x 4 elements
}

}  // namespace
}  // namespace memopt
