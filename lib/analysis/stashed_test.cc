#include "analysis/stashed.h"

#include <catch2/catch.hpp>

#include "helpers/analysis_test_util.h"
#include "analysis/boundary.h"
#include "analysis/exec_order.h"
#include "test_data.h"

namespace memopt {
namespace {

using testing::NodeByName;
using testing::NodeNames;

StashedCandidates CandidatesOf(const Graph& graph) {
  Boundary b = FindBoundary(graph, ScanOptions{}).value();
  ExecutionOrder order = MemoryEfficientOrder(graph, b).value();
  return FindStashedCandidates(graph, order);
}

TEST_CASE("stashed: forward outputs read by the backward pass", "[analysis][stashed]") {
  auto path = testing::SharedData("ort_recompute/recompute_gelu.onnx");
  if (!path) return;
  Model m = testing::LoadShaped(*path);
  StashedCandidates s = CandidatesOf(m.graph);
  // Gemm_0 -> GeluGrad, Gelu_1 -> Gemm_2_Grad/Gemm_1, and the YieldOp's incoming gradient.
  CHECK(NodeNames(m.graph, s.nodes) == std::vector<std::string>{"Gemm_0", "Gelu_1", "YieldOp"});
  CHECK(s.outputs[NodeByName(m.graph, "Gemm_0")] == std::vector<int32_t>{0});
  CHECK_FALSE(s.IsCandidate(NodeByName(m.graph, "Gemm_2")));  // 'data' only feeds the YieldOp
  CHECK(s.is_stashed_value[m.graph.FindValue("com.microsoft::Gelu_5")]);
  CHECK(s.is_stashed_value[m.graph.FindValue("onnx::Gemm_6")]);
  CHECK_FALSE(s.is_stashed_value[m.graph.FindValue("data")]);
}

TEST_CASE("stashed: a tensor read by backward only through Shape is not stashed", "[analysis][stashed]") {
  auto path = testing::SharedData("ort_recompute/recompute_tile.onnx");
  if (!path) return;
  Model m = testing::LoadShaped(*path);
  StashedCandidates s = CandidatesOf(m.graph);
  // The relocated Tile_26_Grad/Shape_0 is forward now, and its output is read by the backward
  // pass: it is a candidate itself (not recomputable, so it gets no plan).
  CHECK(NodeNames(m.graph, s.nodes) ==
        std::vector<std::string>{"ConcatTraining", "Tile_26_Grad/Shape_0", "Tile_26", "YieldOp"});
  CHECK_FALSE(s.IsCandidate(NodeByName(m.graph, "Expand_25")));
  // Only output 0 of ConcatTraining is read by the backward pass.
  CHECK(s.outputs[NodeByName(m.graph, "ConcatTraining")] == std::vector<int32_t>{0});
}

}  // namespace
}  // namespace memopt
