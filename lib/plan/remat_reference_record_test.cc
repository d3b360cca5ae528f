// memopt's plans against the exact reference of the general rematerialization problem, on every
// small test graph (issue "Plans from the whole rematerialization space"). The reference's best
// schedules are solved outside the tests (scripts/remat_reference.py: HiGHS on the program of
// plan/remat_reference.h, started from memopt's own plan) and recorded in
// tests/data/remat_reference/*.json. Here:
//   * every recorded schedule, replayed through memopt's accounting, has the recorded peak and
//     added seconds (the records stay true to the accounting they were solved under);
//   * memopt's plan for each target, written as the reference's stages, has the peak memopt
//     predicts (the two accountings agree on memopt's own plans);
//   * memopt's lowest peak is within 1% of the reference's, and at each budget the reference meets
//     memopt meets it too, for at most 1% more added compute (plus 1 ps).
//   * every plan memopt makes here, written, loaded back and run on the CPU executor, computes
//     bit-identical outputs with the measured peak it predicts (`apply --verify`).
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "helpers/plan_test_util.h"
#include "io/model_loader.h"
#include "pipeline/load_and_scan.h"
#include "pipeline/plan_pipeline.h"
#include "rewrite/model_writer.h"
#include "verify/verify_rewrite.h"
#include "plan/budget_sweep.h"
#include "plan/remat_reference.h"

namespace memopt {
namespace {

using Stages = std::vector<std::vector<int32_t>>;

std::vector<nlohmann::json> Records() {
  std::vector<nlohmann::json> records;
  const std::filesystem::path dir = testing::SourcePath("tests/data/remat_reference");
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() == ".json") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  for (const auto& file : files) {
    std::ifstream in(file);
    std::stringstream text;
    text << in.rdbuf();
    records.push_back(nlohmann::json::parse(text.str()));
  }
  return records;
}

/// The stages of a recorded schedule ({"stage": [steps]}) over `steps` stages.
Stages RecordedStages(const nlohmann::json& schedule, size_t steps) {
  Stages stages(steps);
  for (const auto& [stage, list] : schedule.items()) stages[std::stoul(stage)] = list.get<std::vector<int32_t>>();
  return stages;
}

struct MemoptPlan {
  bool met = false;
  int64_t peak = 0;
  double added_seconds = 0;
  int64_t replayed_peak = 0;  ///< its stages through the reference's accounting
  int64_t measured_peak = -1;  ///< the written rewrite run on the CPU executor (bit-identical)
};

/// Writes the plan's rewrite, loads it back and runs both models (apply --verify): its outputs
/// must be bit-identical; returns the measured peak.
int64_t VerifiedPeak(const ScannedModel& model, const PlanOutcome& outcome) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("memopt_record_verify_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string out = (dir / "rewritten.onnx").string();
  std::vector<std::string> nodes;
  for (const Node& n : outcome.rewritten.graph.nodes) nodes.push_back(outcome.rewritten.graph.ToProto(n).SerializeAsString());
  Expected<WriteModelReport> written = WriteModelWithNodes(model.loaded.model, nodes, out);
  INFO(written.status().message());
  REQUIRE(written.ok());
  Expected<Model> reloaded = LoadModel(out);
  INFO(reloaded.status().message());
  REQUIRE(reloaded.ok());
  Expected<VerifyResult> v = VerifyRewrite(model.loaded.model, model.scan, outcome, *reloaded, model.dims, {});
  INFO(v.status().message());
  REQUIRE(v.ok());
  CHECK(v->outputs_compared == model.graph().outputs.size());
  // The planned layout's footprint within 5% of the live-bytes peak (docs/scan.md).
  INFO("footprint " << outcome.peak.footprint_bytes << ", peak " << outcome.peak.peak_bytes);
  CHECK(static_cast<double>(outcome.peak.footprint_bytes) <= 1.05 * static_cast<double>(outcome.peak.peak_bytes));
  std::filesystem::remove_all(dir);
  return v->measured_peak_bytes;
}

MemoptPlan PlanAt(const ScannedModel& model, int64_t budget) {
  PlanRequest request;
  request.level = model.options.level;
  request.budget = SizeSpec{false, budget, 0.0};
  auto planned = PlanConfig(model, request);
  INFO(planned.status().message());
  REQUIRE(planned.ok());
  const PlanOutcome& outcome = (*planned)->outcome;
  MemoptPlan plan;
  plan.met = (*planned)->planned && (*planned)->planned->met;
  plan.peak = outcome.peak.peak_bytes;
  plan.added_seconds = outcome.added_seconds;
  std::vector<NodeId> originals;
  for (const auto& clone : outcome.spec.clones) originals.push_back(clone.original);
  auto stages = RematStagesOfRewrite(model.graph(), model.scan, outcome.rewritten.order, outcome.rewritten.new_id,
                                     outcome.rewritten.clone_id, originals);
  INFO(stages.status().message());
  REQUIRE(stages.ok());
  RematReferenceOptions fixed;
  fixed.fixed = *stages;
  auto replay = SolveRematReference(model.graph(), model.scan, model.dims, fixed);
  INFO(replay.status().message());
  REQUIRE(replay.ok());
  plan.replayed_peak = replay->peak_bytes;
  plan.measured_peak = VerifiedPeak(model, outcome);
  return plan;
}

TEST_CASE("remat reference records: memopt within 1% of the general optimum on small graphs",
          "[plan][remat_reference]") {
  for (const nlohmann::json& record : Records()) {
    const std::string name = record.at("name");
    INFO("graph " << name);
    ScanRequest request;
    if (record.at("shared")) {
      auto path = testing::SharedData(record.at("model"));
      if (!path) continue;  // marked skipped
      request.model = *path;
    } else {
      request.model = testing::SourcePath(record.at("model"));
    }
    request.dims = record.at("dims");
    request.ops = record.at("ops");
    request.checkpoint_plans = true;  // memopt's model, as plan --budget/--sweep use it by default
    auto model = LoadAndScan(request);
    INFO(model.status().message());
    REQUIRE(model.ok());
    const ScannedModel& m = **model;
    REQUIRE(m.scan.peak.peak_bytes == record.at("unoptimized_peak").get<int64_t>());
    REQUIRE(m.scan.order.order.size() == record.at("steps").get<size_t>());
    for (const nlohmann::json& target : record.at("targets")) {
      const std::string label = target.at("target");
      INFO("target " << label);
      const nlohmann::json& ref = target.at("reference");
      if (!ref.is_null()) {
        RematReferenceOptions fixed;
        fixed.fixed = RecordedStages(ref.at("schedule"), m.scan.order.order.size());
        auto replay = SolveRematReference(m.graph(), m.scan, m.dims, fixed);
        INFO(replay.status().message());
        REQUIRE(replay.ok());
        CHECK(replay->peak_bytes == ref.at("peak").get<int64_t>());
        CHECK(replay->added_seconds == Approx(ref.at("added_seconds").get<double>()).epsilon(1e-9).margin(1e-18));
      }
      int64_t budget = target.at("budget");
      if (label == "lowest") {
        PlanRequest plan_request;
        plan_request.level = m.options.level;
        auto setup = PrepareBudgetPlanning(m, plan_request);
        REQUIRE(setup.ok());
        SweepOptions sweep;
        sweep.plan = setup->options;
        sweep.points = 2;
        auto swept = SweepBudgets(setup->evaluator, sweep);
        REQUIRE(swept.ok());
        budget = swept->lowest_peak;
      }
      const MemoptPlan plan = PlanAt(m, budget);
      CHECK(plan.replayed_peak == plan.peak);
      CHECK(plan.measured_peak == plan.peak);
      if (ref.is_null() || ref.at("peak").get<int64_t>() > target.at("budget").get<int64_t>()) continue;
      const auto ref_peak = ref.at("peak").get<int64_t>();
      const auto ref_seconds = ref.at("added_seconds").get<double>();
      if (label == "lowest") {
        INFO("memopt's lowest peak " << plan.peak << ", the reference's " << ref_peak);
        CHECK(static_cast<double>(plan.peak) <= 1.01 * static_cast<double>(ref_peak));
      } else {
        INFO("budget " << budget << ": memopt " << plan.peak << " B for " << plan.added_seconds << " s, the reference "
                       << ref_peak << " B for " << ref_seconds << " s");
        CHECK(plan.met);
        CHECK(plan.added_seconds <= 1.01 * ref_seconds + 1e-12);
      }
    }
  }
}

}  // namespace
}  // namespace memopt
