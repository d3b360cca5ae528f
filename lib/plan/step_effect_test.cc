#include "plan/step_effect.h"

#include <catch2/catch.hpp>

#include "plan/budget_planner.h"
#include "helpers/plan_test_util.h"
#include "test_data.h"

namespace memopt {
namespace {

/// Every candidate alone and every whole cluster: the local effect equals the simulated one.
/// Returns how many units needed the simulation.
int CheckEffects(const testing::Scanned& s, int* units) {
  Expected<PlanEvaluator> ev = PlanEvaluator::Create(s.model.graph, s.scan, s.dims);
  REQUIRE(ev.ok());
  Expected<StepEffects> fx = StepEffects::Create(*ev);
  REQUIRE(fx.ok());
  std::vector<std::vector<size_t>> all_units;
  std::vector<size_t> supported;
  for (size_t i = 0; i < s.scan.plans.size(); ++i) {
    if (!ev->spec_builder().Supported(i)) continue;
    supported.push_back(i);
    all_units.push_back({i});
  }
  for (const std::vector<size_t>& g : WholeClusterGroups(s.scan, supported)) all_units.push_back(g);
  if (!supported.empty()) all_units.push_back(supported);  // everything at once: interacting plans, shared clones
  // Split plans: each split alone, every split of a plan, and everything with every split.
  const RewriteSpecBuilder& builder = ev->spec_builder();
  const std::vector<size_t> with_splits = WithSplits(builder, supported);
  for (size_t p : with_splits) {
    if (!builder.IsSplit(p)) continue;
    all_units.push_back({p});
    if (builder.SplitReader(p) == 1 && builder.Readers(builder.BasePlan(p)).size() > 2) {
      std::vector<size_t> every;
      for (size_t j = 1; j < builder.Readers(builder.BasePlan(p)).size(); ++j) {
        every.push_back(static_cast<size_t>(builder.SplitIndex(builder.BasePlan(p), static_cast<int32_t>(j))));
      }
      all_units.push_back(every);
    }
  }
  if (with_splits.size() > supported.size()) all_units.push_back(with_splits);
  int simulated = 0;
  for (const std::vector<size_t>& unit : all_units) {
    bool full = false;
    Expected<std::vector<StepRun>> local = fx->EffectOf(unit, &full);
    Expected<std::vector<StepRun>> exact = fx->SimulatedEffectOf(unit);
    REQUIRE(local.ok());
    REQUIRE(exact.ok());
    INFO("unit of " << unit.size() << " plans, first " << s.scan.plans[builder.BasePlan(unit.front())].cluster_id
                     << (builder.IsSplit(unit.front()) ? " (split)" : ""));
    CHECK(*local == *exact);
    simulated += full;
  }
  *units += static_cast<int>(all_units.size());
  return simulated;
}

void CheckCases(const std::vector<testing::GraphCase>& cases) {
  testing::ForEachScanAtEveryLevel(cases, [](const testing::Scanned& s) {
    int units = 0;
    const int simulated = CheckEffects(s, &units);
    INFO(simulated << " of " << units << " units simulated");
    CHECK(simulated == 0);
  });
}

TEST_CASE("step effects: local effects equal the simulation on ORT's graphs", "[plan][effects]") {
  CheckCases({
      {"ort_recompute/recompute_gelu.onnx", "input1_dim0=16,input1_dim1=784"},
      {"ort_recompute/recompute_tile.onnx", ""},
      {"ort_recompute/3layer_bloom_optimized_training.onnx", "inputs_input_ids_dim0=2,inputs_attention_mask_dim1=32"},
      {"ort_training_api/training_model.onnx", ""},
  });
}

TEST_CASE("step effects: local effects equal the simulation on the source tree's training graphs",
          "[plan][effects]") {
  CheckCases({
      {"src:tests/data/plan/gpt2_tiny_2layer.onnx", "batch=4,seq_len=64"},
      {"src:tests/data/plan/relu_mlp_train.onnx", ""},
      {"src:tests/data/plan/gpt_synth_1layer.onnx", "batch=8,seq_len=1024"},
      {"src:tests/data/plan/convnet_bn_train.onnx", "batch=4"},
  });
}

}  // namespace
}  // namespace memopt
