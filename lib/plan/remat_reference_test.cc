// The exact reference of the general rematerialization problem (plan/remat_reference.h): with
// recomputation off its optimum is memopt's own peak estimate to the byte, on every small test
// graph; with it on, no worse, and a budget between the two is met.
#include "plan/remat_reference.h"

#include "analysis/op_table.h"
#include "helpers/plan_test_util.h"

namespace memopt {
namespace {

using testing::ScanFile;

const std::vector<testing::GraphCase>& SmallGraphs() {
  static const std::vector<testing::GraphCase> cases = {
      {"src:tests/data/plan/relu_mlp_train.onnx", "batch=4"},
      {"src:tests/data/plan/peak_raising_level1.onnx", ""},
      {"src:tests/data/plan/convnet_bn.onnx", "batch=2"},
      {"src:tests/data/plan/gpt_synth_1layer.onnx", ""},
      {"ort_recompute/recompute_gelu.onnx", "input1_dim0=16,input1_dim1=784"},
      {"ort_recompute/recompute_tile.onnx", ""},
  };
  return cases;
}

TEST_CASE("remat reference: without recomputation its optimum is memopt's peak estimate", "[plan][remat_reference]") {
  for (const auto& c : SmallGraphs()) {
    auto path = testing::DataPath(c.file);
    if (!path) return;
    INFO(c.file);
    testing::Scanned s = ScanFile(*path, 1, c.dims);
    RematReferenceOptions options;
    options.allow_recompute = false;
    auto r = SolveRematReference(s.model.graph, s.scan, s.dims, options);
    INFO(r.status().message());
    REQUIRE(r.ok());
    REQUIRE(r->feasible);
    CHECK(r->optimal);
    CHECK(r->peak_bytes == s.scan.peak.peak_bytes);
    CHECK(r->recomputations == 0);
  }
}

TEST_CASE("remat reference: recomputation lowers the MLP's peak, and a budget between is met", "[plan][remat_reference]") {
  auto path = testing::DataPath("src:tests/data/plan/relu_mlp_train.onnx");
  if (!path) return;
  testing::Scanned s = ScanFile(*path, 1, "batch=4");
  RematReferenceOptions options;
  options.time_limit_seconds = 30;
  auto best = SolveRematReference(s.model.graph, s.scan, s.dims, options);
  INFO(best.status().message());
  REQUIRE(best.ok());
  REQUIRE(best->feasible);
  CHECK(best->peak_bytes <= s.scan.peak.peak_bytes);
  if (best->optimal) {
    RematReferenceOptions replay;
    replay.fixed = best->recomputed;
    auto replayed = SolveRematReference(s.model.graph, s.scan, s.dims, replay);
    REQUIRE(replayed.ok());
    CHECK(replayed->peak_bytes == best->peak_bytes);
  }
  INFO("lowest peak " << best->peak_bytes << " of " << s.scan.peak.peak_bytes << ", " << best->recomputations
                      << " recomputations");
  if (best->peak_bytes < s.scan.peak.peak_bytes) {
    CHECK(best->recomputations > 0);
    RematReferenceOptions budgeted = options;
    budgeted.budget = (best->peak_bytes + s.scan.peak.peak_bytes) / 2;
    auto met = SolveRematReference(s.model.graph, s.scan, s.dims, budgeted);
    REQUIRE(met.ok());
    REQUIRE(met->feasible);
    CHECK(met->peak_bytes <= *budgeted.budget);
    CHECK(met->added_seconds <= best->added_seconds + 1e-12);
  }
  // Below the lowest peak nothing is feasible.
  RematReferenceOptions impossible = options;
  impossible.time_limit_seconds = 5;
  impossible.budget = best->peak_bytes - 1;
  auto none = SolveRematReference(s.model.graph, s.scan, s.dims, impossible);
  REQUIRE(none.ok());
  if (best->optimal) CHECK_FALSE(none->feasible);
}

// x -> a = Relu(x) -> b -> c = Concat(b, b) -> d = Slice(c) -> e = Add(d, a): `a` waits through the
// widest steps (b and c live) for its last reader. Recomputing Relu(x) right before `e` frees `a`
// after `b` reads it: the peak falls by a's 1 KiB, at the same steps.
TEST_CASE("remat reference: recomputing a value read late takes it out of the middle peak", "[plan][remat_reference]") {
  testing::Scanned s = testing::ScanModel(testing::TextModel(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[256] x) => (float[256] y) {
  st = Constant <value = int64[1] {0}> ()
  en = Constant <value = int64[1] {256}> ()
  a = Relu(x)
  b = Neg(a)
  c = Concat <axis = 0> (b, b)
  d = Slice(c, st, en)
  e = Add(d, a)
  y = Neg(e)
})", {"st", "en", "a", "b", "c", "d", "e", "y"}), 1);
  RematReferenceOptions off;
  off.allow_recompute = false;
  auto original = SolveRematReference(s.model.graph, s.scan, s.dims, off);
  REQUIRE(original.ok());
  CHECK(original->peak_bytes == s.scan.peak.peak_bytes);
  auto best = SolveRematReference(s.model.graph, s.scan, s.dims, RematReferenceOptions{});
  REQUIRE(best.ok());
  REQUIRE(best->feasible);
  CHECK(best->optimal);
  CHECK(best->peak_bytes == original->peak_bytes - 1024);
  CHECK(best->recomputations == 1);
  // The stage of `e` runs Relu again.
  const auto position = [&](const std::string& name) { return s.scan.order.position[testing::FindNode(s.model.graph, name)->id]; };
  CHECK(best->recomputed[static_cast<size_t>(position("e"))] == std::vector<int32_t>{position("a")});
  // The schedule replayed (recomputations fixed, the best residency simulated) has the solver's peak.
  RematReferenceOptions replay;
  replay.fixed = best->recomputed;
  auto replayed = SolveRematReference(s.model.graph, s.scan, s.dims, replay);
  REQUIRE(replayed.ok());
  CHECK(replayed->feasible);
  CHECK(replayed->peak_bytes == best->peak_bytes);
  CHECK(replayed->recomputations == 1);
  // A schedule that recomputes a later step is refused with the stage named.
  RematReferenceOptions bad;
  bad.fixed = std::vector<std::vector<int32_t>>(s.scan.order.order.size());
  (*bad.fixed)[static_cast<size_t>(position("a"))] = {position("e")};
  auto refused = SolveRematReference(s.model.graph, s.scan, s.dims, bad);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().message().find("node 'a'") != std::string::npos);
}

TEST_CASE("remat reference: recomputations inside ORT's branch batches count at the batch's start",
          "[plan][remat_reference]") {
  // tests/data/plan/convnet_residual_train.onnx (YieldOp): steps 30-42 are the BN_2 gradient's
  // constants and batch statistics, none of which depends on the boundary, ended by its
  // BatchNormalizationGrad (43, main path); step 44 (conv2d_2's ConvGrad) follows a main step. A
  // clone of the forward conv2d_2 (step 6) runs in that batch near its start, so the reference
  // takes it at stage 30 or at a stage after 43, not at 42 or 43.
  testing::Scanned s = ScanFile(testing::SourcePath("tests/data/plan/convnet_residual_train.onnx"), 1, "",
                                &OpTable::Extended());
  const auto& order = s.scan.order.order;
  REQUIRE(order.size() == 78);
  REQUIRE(s.model.graph.node(order[30]).name == "node__native_batch_norm_legit_functional_2__0_Grad/Constant_0");
  REQUIRE(s.model.graph.node(order[43]).op_type == "BatchNormalizationGrad");
  auto at = [&](size_t stage) {
    RematReferenceOptions options;
    options.fixed = std::vector<std::vector<int32_t>>(order.size());
    (*options.fixed)[stage] = {6};
    return SolveRematReference(s.model.graph, s.scan, s.dims, options);
  };
  CHECK(at(30).ok());
  CHECK(at(44).ok());
  for (size_t stage : {31, 42, 43}) {
    INFO("stage " << stage);
    Expected<RematReferenceResult> refused = at(stage);
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.status().message().find("put them at the batch's first step, stage 30") != std::string::npos);
  }
}

}  // namespace
}  // namespace memopt
