#include "analysis/layer_boundary.h"

#include <catch2/catch.hpp>

#include "helpers/analysis_test_util.h"
#include "analysis/boundary.h"
#include "analysis/exec_order.h"
#include "test_data.h"

namespace memopt {
namespace {

// Upstream TransformerLayerDetectionTest (reference §9.1).
TEST_CASE("layer boundary: the attention LayerNorms of the 3-layer BLOOM graph", "[analysis][layer_boundary]") {
  auto path = testing::SharedData("ort_recompute/3layer_bloom_optimized_training.onnx");
  if (!path) return;
  Model m = testing::LoadShaped(*path);
  Boundary b = FindBoundary(m.graph, ScanOptions{}).value();
  ExecutionOrder order = MemoryEfficientOrder(m.graph, b).value();
  std::vector<NodeId> boundaries = FindLayerBoundaryLayerNormNodes(m.graph, order, b);
  CHECK(testing::NodeNames(m.graph, boundaries) ==
        std::vector<std::string>{"LayerNormalization_token_0", "LayerNormalization_token_6",
                                 "LayerNormalization_token_12"});
}

TEST_CASE("layer boundary: none without a residual Add and a Softmax", "[analysis][layer_boundary]") {
  auto path = testing::SharedData("ort_recompute/recompute_gelu.onnx");
  if (!path) return;
  Model m = testing::LoadShaped(*path);
  Boundary b = FindBoundary(m.graph, ScanOptions{}).value();
  ExecutionOrder order = MemoryEfficientOrder(m.graph, b).value();
  CHECK(FindLayerBoundaryLayerNormNodes(m.graph, order, b).empty());
}

TEST_CASE("layer boundary: attention LN is a boundary, MLP LN is not", "[analysis][layer_boundary]") {
  Model m = testing::TextModel(R"(
    <ir_version: 8, opset_import: ["" : 17, "com.microsoft" : 1]>
    g (float[N, 8] x, float[8] s, float[8] b) => (float[N, 8] out) {
      ln1 = LayerNormalization(x, s, b)
      sm = Softmax(ln1)
      add1 = Add(x, sm)
      ln2 = LayerNormalization(add1, s, b)
      r = Relu(ln2)
      add2 = Add(add1, r)
      y = com.microsoft.YieldOp <full_shape_outputs = [0]> (add2)
      out = Identity(y)
    })",
                               {"ln1", "softmax", "add1", "ln2", "relu", "add2", "yield", "out"});
  Boundary b = FindBoundary(m.graph, ScanOptions{}).value();
  ExecutionOrder order = MemoryEfficientOrder(m.graph, b).value();
  CHECK(testing::NodeNames(m.graph, FindLayerBoundaryLayerNormNodes(m.graph, order, b)) ==
        std::vector<std::string>{"ln1"});
}

}  // namespace
}  // namespace memopt
