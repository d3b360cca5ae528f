#include "analysis/recompute_search.h"

#include <catch2/catch.hpp>

#include "helpers/analysis_test_util.h"
#include "analysis/boundary.h"
#include "analysis/exec_order.h"
#include "analysis/layer_boundary.h"
#include "test_data.h"

namespace memopt {
namespace {

using testing::NodeByName;
using testing::NodeNames;

struct Searched {
  ExecutionOrder order;
  StashedCandidates stashed;
  RecomputeSearchResult result;
};

Searched SearchAll(const Graph& graph, const RecomputeSearchOptions& options) {
  Searched s;
  Boundary b = FindBoundary(graph, ScanOptions{}).value();
  s.order = MemoryEfficientOrder(graph, b).value();
  s.stashed = FindStashedCandidates(graph, s.order);
  std::vector<NodeId> layers;
  if (options.layer_boundary) layers = FindLayerBoundaryLayerNormNodes(graph, s.order, b);
  s.result = SearchRecomputePlans(graph, s.order, s.stashed, layers, OpTable::Builtin(), options);
  return s;
}

const RejectedCandidate* RejectedFor(const RecomputeSearchResult& r, NodeId n) {
  for (const RejectedCandidate& c : r.rejected) {
    if (c.node == n) return &c;
  }
  return nullptr;
}

TEST_CASE("recompute search: gelu graph, a stashed producer bounds the subgraph", "[analysis][recompute]") {
  auto path = testing::SharedData("ort_recompute/recompute_gelu.onnx");
  if (!path) return;
  Model m = testing::LoadShaped(*path);
  Searched s = SearchAll(m.graph, {});
  REQUIRE(s.result.plans.size() == 2);
  // Walked in reverse execution order: Gelu_1 first, then Gemm_0.
  const RecomputePlan& gelu = s.result.plans[0];
  CHECK(gelu.entry == NodeByName(m.graph, "Gelu_1"));
  CHECK(gelu.cluster_id == "Gelu+");  // its input (Gemm_0's output) is stashed: a boundary
  CHECK(gelu.type() == 1);
  CHECK(gelu.save_ratio == Rational(1));
  REQUIRE(gelu.outputs.size() == 1);
  CHECK(gelu.outputs[0].value == m.graph.FindValue("onnx::Gemm_6"));
  REQUIRE(gelu.outputs[0].bytes.has_value());
  CHECK(*gelu.outputs[0].bytes == SymExpr(2000) * SymExpr::Symbol("input1_dim0"));
  const RecomputePlan& gemm = s.result.plans[1];
  CHECK(gemm.entry == NodeByName(m.graph, "Gemm_0"));
  CHECK(gemm.cluster_id == "Gemm+");  // inputs are a graph input and weights
  CHECK(NodeNames(m.graph, gemm.subgraph) == std::vector<std::string>{"Gemm_0"});

  const RejectedCandidate* yield = RejectedFor(s.result, NodeByName(m.graph, "YieldOp"));
  REQUIRE(yield != nullptr);
  CHECK(yield->reason == "not recomputable: op com.microsoft::YieldOp is not in the recomputable-op table");
}

TEST_CASE("recompute search: tile graph grows through Expand, stops at small static tensors",
          "[analysis][recompute]") {
  auto path = testing::SharedData("ort_recompute/recompute_tile.onnx");
  if (!path) return;
  Model m = testing::LoadShaped(*path);
  Searched s = SearchAll(m.graph, {});
  std::vector<std::string> clusters;
  for (const RecomputePlan& p : s.result.plans) clusters.push_back(p.cluster_id);
  CHECK(clusters == std::vector<std::string>{"Expand+Tile+", "ConcatTraining+"});
  CHECK(NodeNames(m.graph, s.result.plans[0].subgraph) == std::vector<std::string>{"Expand_25", "Tile_26"});

  // Older ORT builds limited the subgraph size; a limit of 1 node rejects Expand+Tile+.
  RecomputeSearchOptions limited;
  limited.max_nodes = 1;
  Searched l = SearchAll(m.graph, limited);
  REQUIRE(l.result.plans.size() == 1);
  CHECK(l.result.plans[0].cluster_id == "ConcatTraining+");
  const RejectedCandidate* tile = RejectedFor(l.result, NodeByName(m.graph, "Tile_26"));
  REQUIRE(tile != nullptr);
  CHECK(tile->reason == "no recompute subgraph: subgraph search stopped at the node limit (1 nodes)");
}

TEST_CASE("recompute search: compromise plan stops at a widening Cast", "[analysis][recompute]") {
  // m = Mul(c, c) is stashed; c = Cast(fp16 -> fp32) of a Relu (not recomputable, not stashed).
  // The full search fails at the Relu; the compromise search keeps the fp16 Cast input and
  // saves 1 - 2/4 = 1/2 of m.
  Model m = testing::TextModel(R"(
    <ir_version: 8, opset_import: ["" : 15, "com.microsoft" : 1]>
    g (float16[N, 4] x) => (float[N, 4] out) {
      a = Relu(x)
      c = Cast <to = 1> (a)
      prod = Mul(c, c)
      y = com.microsoft.YieldOp <full_shape_outputs = [0]> (prod)
      out = Mul(y, prod)
    })",
                               {"relu", "cast", "mul", "yield", "mul_grad"});
  Searched s = SearchAll(m.graph, {});
  REQUIRE(s.result.plans.size() == 1);
  const RecomputePlan& plan = s.result.plans[0];
  CHECK(plan.entry == NodeByName(m.graph, "mul"));
  CHECK(plan.compromise);
  CHECK(plan.type() == 2);
  CHECK(plan.cluster_id == "Cast+Mul+");
  CHECK(plan.save_ratio == Rational::Make(1, 2));
  CHECK(CastSizeRatio(m.graph, m.graph.nodes[NodeByName(m.graph, "cast")]) == Rational::Make(1, 2));
}

TEST_CASE("recompute search: a node gets type-1 and type-2 plans as in ORT 1.19.2", "[analysis][recompute]") {
  // The full search succeeds through the Cast (x is a graph input): ORT 1.19.2 still searches the
  // compromise plan, since a widening Cast was met, and keeps both; ORT's later sources do not.
  Model m = testing::TextModel(testing::kCastMulTrainingGraph, testing::kCastMulTrainingNames);
  Searched s = SearchAll(m.graph, {});
  REQUIRE(s.result.plans.size() == 2);
  CHECK(s.result.plans[0].entry == NodeByName(m.graph, "mul"));
  CHECK(s.result.plans[0].type() == 1);
  CHECK(s.result.plans[0].cluster_id == "Cast+Mul+");
  CHECK(s.result.plans[1].entry == NodeByName(m.graph, "mul"));
  CHECK(s.result.plans[1].type() == 2);
  CHECK(s.result.plans[1].cluster_id == "Cast+Mul+");
  CHECK(s.result.plans[1].save_ratio == Rational::Make(1, 2));

  RecomputeSearchOptions head;
  head.compromise_only_on_failure = true;
  Searched h = SearchAll(m.graph, head);
  REQUIRE(h.result.plans.size() == 1);
  CHECK(h.result.plans[0].type() == 1);
}

TEST_CASE("recompute search: small static inputs are not traversed", "[analysis][recompute]") {
  // k = Relu(w) is [8]: small and static, so the clone of Mul reads it and the plan succeeds.
  // With a symbolic size the Relu would have to be recomputed and the plan fails.
  const char* text = R"(
    <ir_version: 8, opset_import: ["" : 15, "com.microsoft" : 1]>
    g (float[N, 8] x, float[W] w) => (float[N, 8] out) {
      k = Relu(w)
      prod = Mul(x, k)
      y = com.microsoft.YieldOp <full_shape_outputs = [0]> (prod)
      out = Mul(y, prod)
    })";
  {
    std::string fixed = text;
    fixed.replace(fixed.find("float[W]"), 8, "float[8]");
    Model m = testing::TextModel(fixed, {"relu", "mul", "yield", "mul_grad"});
    Searched s = SearchAll(m.graph, {});
    REQUIRE(s.result.plans.size() == 1);
    CHECK(s.result.plans[0].cluster_id == "Mul+");
  }
  {
    Model m = testing::TextModel(text, {"relu", "mul", "yield", "mul_grad"});
    Searched s = SearchAll(m.graph, {});
    CHECK(s.result.plans.empty());
    const RejectedCandidate* mul = RejectedFor(s.result, NodeByName(m.graph, "mul"));
    REQUIRE(mul != nullptr);
    CHECK(mul->reason ==
          "no recompute subgraph: needs 'relu' (Relu), which is not stashed and not recomputable: op Relu is not in "
          "the recomputable-op table");
  }
}

TEST_CASE("recompute search: probe level 0 excludes advanced ops", "[analysis][recompute]") {
  auto path = testing::SharedData("ort_recompute/recompute_tile.onnx");
  if (!path) return;
  Model m = testing::LoadShaped(*path);
  RecomputeSearchOptions basic;
  basic.probe_level = 0;
  Searched s = SearchAll(m.graph, basic);
  // FusedMatMul is advanced, but no stashed node needs it here: same plans as level 1.
  CHECK(s.result.plans.size() == 2);

  auto bloom = testing::SharedData("ort_recompute/3layer_bloom_optimized_training.onnx");
  if (!bloom) return;
  Model b = testing::LoadShaped(*bloom);
  Searched s0 = SearchAll(b.graph, basic);
  for (const RecomputePlan& p : s0.result.plans) {
    CHECK(p.cluster_id.find("MatMul") == std::string::npos);
    CHECK(p.cluster_id.find("LayerNormalization") == std::string::npos);
    CHECK(p.cluster_id.find("Softmax") == std::string::npos);
  }
}

}  // namespace
}  // namespace memopt
