// Rewritten graphs compute bit-identical outputs on the CPU executor, and their measured peak is
// the planned one: every plan of every training graph the executor can run (level 1, level 2,
// budgets of 0.9, 0.7 and 0.5 of the unoptimized peak).
#include "verify/verify_rewrite.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>

#include "exec/executor.h"
#include "grad/grad_builder.h"
#include "grad/training_model_writer.h"
#include "plan/budget_planner.h"
#include "helpers/plan_test_util.h"
#include "rewrite/model_writer.h"
#include "test_data.h"

namespace memopt {
namespace {

namespace fs = std::filesystem;

struct Case {
  std::string file;  ///< under the shared data folder, or "src:" + a source-tree path
  std::string dims;
  /// Every plan kind; false for graphs whose run takes seconds (BLOOM's 250k-word vocabulary):
  /// then level plans at levels 1 and 2 and the 0.7 budget at level 1 only.
  bool full = true;
};

/// Writes the outcome, loads it back, runs both models and compares.
void WriteAndVerify(const testing::Scanned& s, const std::vector<size_t>& plans, const std::string& what) {
  INFO(what << ": " << plans.size() << " plans");
  PlanOutcome outcome = testing::Outcome(s, plans);
  testing::CheckRewriteInvariants(s.model.graph, s.scan, outcome);
  fs::path dir = fs::temp_directory_path() / ("memopt_verify_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  fs::path out = dir / "rewritten.onnx";
  std::vector<std::string> nodes;
  for (const Node& n : outcome.rewritten.graph.nodes)
    nodes.push_back(outcome.rewritten.graph.ToProto(n).SerializeAsString());
  Expected<WriteModelReport> written = WriteModelWithNodes(s.model, nodes, out.string());
  INFO(written.status().message());
  REQUIRE(written.ok());
  Expected<Model> reloaded = LoadModel(out.string());
  INFO(reloaded.status().message());
  REQUIRE(reloaded.ok());
  // The file runs in the predicted order.
  Expected<std::vector<NodeId>> run_order = RewrittenRunOrder(reloaded->graph, "");
  REQUIRE(run_order.ok());
  CHECK(*run_order == outcome.rewritten.order.order);

  Expected<VerifyResult> v = VerifyRewrite(s.model, s.scan, outcome, *reloaded, s.dims, {});
  INFO(v.status().message());
  REQUIRE(v.ok());
  CHECK(v->outputs_compared == s.model.graph.outputs.size());
  REQUIRE(outcome.peak.sized);
  CHECK(v->measured_peak_bytes == outcome.peak.peak_bytes);
  // The planned layout's footprint within 5% of the live-bytes peak (docs/scan.md).
  INFO("footprint " << outcome.peak.footprint_bytes << ", peak " << outcome.peak.peak_bytes);
  CHECK(static_cast<double>(outcome.peak.footprint_bytes) <= 1.05 * static_cast<double>(outcome.peak.peak_bytes));
  if (plans.empty()) CHECK(v->original_measured_peak_bytes == s.scan.peak.peak_bytes);
  fs::remove_all(dir);
}

/// Every plan kind of one graph, written, reloaded, run and compared with the original. A graph
/// the CPU executor cannot run (or absent shared data) marks the test case skipped.
void VerifyEveryPlan(const Case& c) {
  auto path = testing::DataPath(c.file);
  if (!path) return;  // marked skipped (test_data.h)
  INFO(c.file);
  for (int level : {1, 2}) {
    testing::Scanned s = testing::ScanFile(*path, level, c.dims);
    Status supported = CheckSupported(s.model.graph, KernelRegistry::Cpu());
    if (!supported.ok()) {
      testing::MarkSkipped("the CPU executor cannot run " + c.file + ": " + supported.message());
      return;
    }
    if (c.full) WriteAndVerify(s, {}, "no plan");
    WriteAndVerify(s, testing::LevelPlans(s), "level " + std::to_string(level));
    if (!c.full && level != 1) continue;
    Expected<PlanEvaluator> ev = PlanEvaluator::Create(s.model.graph, s.scan, s.dims);
    REQUIRE(ev.ok());
    BudgetPlanOptions options;
    options.candidates = BudgetCandidates(s.scan, level, ev->spec_builder());
    for (double fraction : c.full ? std::vector<double>{0.9, 0.7, 0.5} : std::vector<double>{0.7}) {
      options.budget_bytes = static_cast<int64_t>(std::llround(fraction * s.scan.peak.peak_bytes));
      Expected<BudgetPlanResult> r = PlanForBudget(*ev, options);
      REQUIRE(r.ok());
      WriteAndVerify(s, r->plans, "budget " + std::to_string(fraction) + " level " + std::to_string(level));
    }
    // memopt's split model: every plan in as many clone groups as it has backward readers, and
    // budget plans over it.
    const std::vector<size_t> with_splits = WithSplits(ev->spec_builder(), options.candidates);
    if (with_splits.size() == options.candidates.size()) continue;
    WriteAndVerify(s, with_splits, "every split, level " + std::to_string(level));
    options.candidates = with_splits;
    for (double fraction : c.full ? std::vector<double>{0.7, 0.5} : std::vector<double>{}) {
      options.budget_bytes = static_cast<int64_t>(std::llround(fraction * s.scan.peak.peak_bytes));
      Expected<BudgetPlanResult> r = PlanForBudget(*ev, options);
      REQUIRE(r.ok());
      WriteAndVerify(s, r->plans, "split budget " + std::to_string(fraction) + " level " + std::to_string(level));
    }
  }
}

// One test case per graph (the BLOOM one takes most of the time), so that ctest -j runs them side
// by side and a graph that needs the shared data is reported as skipped on its own.
TEST_CASE("verify: every plan of recompute_gelu.onnx is bit-identical", "[rewrite][verify][exec]") {
  VerifyEveryPlan({"ort_recompute/recompute_gelu.onnx", "input1_dim0=8,input1_dim1=784"});
}

TEST_CASE("verify: every plan of the ORT training-API MLP is bit-identical", "[rewrite][verify][exec]") {
  VerifyEveryPlan({"ort_training_api/training_model.onnx", "input-0_dim0=8,input-0_dim1=784,output-0_dim0=8"});
}

TEST_CASE("verify: every plan of the tiny 2-layer GPT-2 (source tree) is bit-identical", "[rewrite][verify][exec]") {
  VerifyEveryPlan({"src:tests/data/plan/gpt2_tiny_2layer.onnx", "batch=2,seq_len=8"});
}

TEST_CASE("verify: every plan of the 3-layer BLOOM training graph is bit-identical", "[rewrite][verify][exec]") {
  VerifyEveryPlan({"ort_recompute/3layer_bloom_optimized_training.onnx",
                   "inputs_input_ids_dim0=2,inputs_attention_mask_dim1=8,inputs_attention_mask_dim0=2,"
                   "inputs_labels_dim0=2,inputs_labels_dim1=8",
                   false});
}

TEST_CASE("verify: level plans of graphs built by memopt grad are bit-identical", "[rewrite][verify][grad]") {
  // The PyTorch-exported fixtures (tests/data/grad_fixtures): grad, then the level-1 and level-2
  // plans, written, reloaded, run and compared with the training graph.
  fs::path dir = fs::temp_directory_path() / ("memopt_verify_grad_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  for (const std::string name : {"gpt2_tiny", "bert_tiny", "llama_tiny", "cnn_tiny"}) {
    INFO("fixture " << name);
    auto forward = LoadModel(testing::SourcePath("tests/data/grad_fixtures/" + name + "/model.onnx"));
    REQUIRE(forward.ok());
    auto grad = BuildGradientGraph(*forward);
    INFO(grad.status().message());
    REQUIRE(grad.ok());
    const std::string train = (dir / (name + "_train.onnx")).string();
    REQUIRE(WriteTrainingModel(*grad, train).ok());
    for (int level : {1, 2}) {
      testing::Scanned s = testing::ScanFile(train, level);
      Status supported = CheckSupported(s.model.graph, KernelRegistry::Cpu());
      INFO(supported.message());
      REQUIRE(supported.ok());
      const std::vector<size_t> plans = testing::LevelPlans(s);
      if (name != "cnn_tiny") CHECK_FALSE(plans.empty());  // transformers have recompute plans
      WriteAndVerify(s, plans, "level " + std::to_string(level));
    }
  }
  fs::remove_all(dir);
}

TEST_CASE("verify: keeps and private chains are bit-identical, measured peak = predicted", "[rewrite][verify][exec]") {
  // The plan set of rewrite_spec_test.cc's keep/private case on the residual ConvNet: originals
  // kept for the first readers, two groups with private chains down to the graph input.
  testing::Scanned s = testing::ScanFile(testing::SourcePath("tests/data/plan/convnet_residual_train.onnx"), 1, "",
                                         &OpTable::Extended());
  WriteAndVerify(s,
                 testing::Select(s, R"(["Conv+:1:-1", "Conv+@1/2.k0.p:0:0", "Conv+@2/k2:0:0",
                                       "BatchNormalization+Relu+:1:-1", "BatchNormalization+Relu+@0/p:0:0"])"),
                 "keeps and private chains");
}

TEST_CASE("verify: extended-op budget plans lower a ConvNet's peak and are bit-identical", "[rewrite][verify][grad]") {
  // tests/data/plan/convnet_bn.onnx (scripts/gen_convnet.py): ORT's table has no Conv or Relu, so
  // only --ops extended gives this ResNet-style graph plans; each budget plan meets its budget,
  // lowers the peak, and its rewrite runs bit-identically with the measured peak = the planned one.
  fs::path dir = fs::temp_directory_path() / ("memopt_verify_convnet_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  auto forward = LoadModel(testing::SourcePath("tests/data/plan/convnet_bn.onnx"));
  REQUIRE(forward.ok());
  auto grad = BuildGradientGraph(*forward);
  INFO(grad.status().message());
  REQUIRE(grad.ok());
  const std::string train = (dir / "convnet_train.onnx").string();
  REQUIRE(WriteTrainingModel(*grad, train).ok());
  testing::Scanned ort = testing::ScanFile(train, 1, "batch=4");
  CHECK(ort.scan.plans.empty());
  testing::Scanned s = testing::ScanFile(train, 1, "batch=4", &OpTable::Extended());
  REQUIRE_FALSE(s.scan.plans.empty());
  Expected<PlanEvaluator> ev = PlanEvaluator::Create(s.model.graph, s.scan, s.dims);
  REQUIRE(ev.ok());
  BudgetPlanOptions options;
  options.candidates = BudgetCandidates(s.scan, 1, ev->spec_builder());
  for (double fraction : {0.95, 0.9, 0.8, 0.7}) {
    options.budget_bytes = static_cast<int64_t>(std::llround(fraction * s.scan.peak.peak_bytes));
    Expected<BudgetPlanResult> r = PlanForBudget(*ev, options);
    REQUIRE(r.ok());
    INFO("budget " << fraction);
    CHECK(r->met);
    CHECK(r->evaluation.peak_bytes <= options.budget_bytes);
    CHECK(r->evaluation.peak_bytes < s.scan.peak.peak_bytes);
    WriteAndVerify(s, r->plans, "budget " + std::to_string(fraction));
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace memopt
