#include "analysis/boundary.h"

#include <catch2/catch.hpp>

#include "helpers/analysis_test_util.h"
#include "test_data.h"

namespace memopt {
namespace {

using testing::NodeByName;
using testing::TextModel;

TEST_CASE("boundary: exactly one YieldOp", "[analysis][boundary]") {
  auto path = testing::SharedData("ort_recompute/recompute_gelu.onnx");
  if (!path) return;
  Model m = testing::LoadShaped(*path);
  Expected<Boundary> b = FindBoundary(m.graph, ScanOptions{});
  REQUIRE(b.ok());
  CHECK(b->kind == Boundary::Kind::kYieldOp);
  CHECK(b->node == NodeByName(m.graph, "YieldOp"));
  CHECK(b->explanation == "YieldOp 'YieldOp'");
}

TEST_CASE("boundary: --boundary NODE overrides, with a did-you-mean", "[analysis][boundary]") {
  auto path = testing::SharedData("ort_recompute/recompute_gelu.onnx");
  if (!path) return;
  Model m = testing::LoadShaped(*path);
  ScanOptions options;
  options.boundary_node = "Gelu_1";
  Expected<Boundary> b = FindBoundary(m.graph, options);
  REQUIRE(b.ok());
  CHECK(b->kind == Boundary::Kind::kOverride);
  CHECK(b->node == NodeByName(m.graph, "Gelu_1"));

  options.boundary_node = "Gelu_l";
  Expected<Boundary> bad = FindBoundary(m.graph, options);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().code() == ErrorCode::kUsage);
  CHECK(bad.status().message() == "boundary node 'Gelu_l' not found in the graph; did you mean 'Gelu_1'?");
}

TEST_CASE("boundary: two YieldOps are an error, as in ORT", "[analysis][boundary]") {
  Model m = TextModel(R"(
    <ir_version: 8, opset_import: ["" : 15, "com.microsoft" : 1]>
    g (float[2] x) => (float[2] z) {
      a = Identity(x)
      y1 = com.microsoft.YieldOp <full_shape_outputs = [0]> (a)
      y2 = com.microsoft.YieldOp <full_shape_outputs = [0]> (y1)
      z = Identity(y2)
    })",
                      {"a", "first_yield", "second_yield", "z"});
  Expected<Boundary> b = FindBoundary(m.graph, ScanOptions{});
  REQUIRE_FALSE(b.ok());
  CHECK_THAT(b.status().message(),
             Catch::StartsWith("there are multiple YieldOps in the graph, node: second_yield is the second one"));
}

TEST_CASE("boundary: loss rule without YieldOp", "[analysis][boundary]") {
  auto path = testing::SharedData("ort_training_api/training_model.onnx");
  if (!path) return;
  Model m = testing::LoadShaped(*path);
  Expected<Boundary> b = FindBoundary(m.graph, ScanOptions{});
  REQUIRE(b.ok());
  CHECK(b->kind == Boundary::Kind::kLoss);
  CHECK(b->node == NodeByName(m.graph, "onnx::SoftmaxCrossEntropyLoss::62639"));
  std::vector<char> backward = LossRuleBackwardMask(m.graph);
  int count = 0;
  for (char c : backward) count += c;
  CHECK(count == 13);  // SoftmaxCrossEntropyLossGrad .. the 4 InPlaceAccumulatorV2
  CHECK(b->explanation ==
        "no YieldOp; loss node 'onnx::SoftmaxCrossEntropyLoss::62639' (SoftmaxCrossEntropyLoss) "
        "(9 gradient nodes found)");
}

TEST_CASE("boundary: without YieldOp or loss op the last forward node is the boundary", "[analysis][boundary]") {
  Model m = TextModel(R"(
    <ir_version: 8, opset_import: ["" : 15, "com.microsoft" : 1]>
    g (float[4] x, float[4] dy) => (float[4] y, float[4] dx) {
      a = Relu(x)
      y = Neg(a)
      dx = com.microsoft.ReluGrad(dy, a)
    })",
                      {"relu", "neg", "relu_grad"});
  Expected<Boundary> b = FindBoundary(m.graph, ScanOptions{});
  REQUIRE(b.ok());
  CHECK(b->kind == Boundary::Kind::kLoss);
  CHECK(b->node == NodeByName(m.graph, "neg"));
  CHECK(IsGradientNode(m.graph.nodes[2]));
}

TEST_CASE("boundary: forward-only graphs", "[analysis][boundary]") {
  for (const char* rel : {"forward/bert_toy_optimized.onnx", "forward/gpt2_megatron.onnx",
                          "forward/TFBertForQuestionAnswering.onnx", "ort_training_api/eval_model.onnx"}) {
    auto path = testing::SharedData(rel);
    if (!path) return;
    Model m = testing::LoadShaped(*path);
    Expected<Boundary> b = FindBoundary(m.graph, ScanOptions{});
    INFO(rel);
    REQUIRE(b.ok());
    CHECK(b->kind == Boundary::Kind::kNone);
    CHECK(b->node == kNone);
  }
}

}  // namespace
}  // namespace memopt
