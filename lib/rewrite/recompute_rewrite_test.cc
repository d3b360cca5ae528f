#include "rewrite/recompute_rewrite.h"

#include <catch2/catch.hpp>
#include <set>

#include "helpers/plan_test_util.h"
#include "test_data.h"

namespace memopt {
namespace {

using testing::CheckRewriteInvariants;
using testing::CountOp;
using testing::FindNode;
using testing::Outcome;
using testing::Producer;
using testing::ScanFile;
using testing::Scanned;
using testing::Select;

TEST_CASE("rewrite: ORT GeluRecompute on recompute_gelu.onnx", "[rewrite]") {
  auto path = testing::SharedData("ort_recompute/recompute_gelu.onnx");
  if (!path) return;
  Scanned s = ScanFile(*path, 1);
  PlanOutcome o = Outcome(s, Select(s, R"(["Gelu+:1:-1"])"));
  const Graph& g = o.rewritten.graph;
  CHECK(CountOp(g, "Gemm") == 5);
  CHECK(CountOp(g, "Gelu") == 2);
  CHECK(CountOp(g, "YieldOp") == 1);
  CHECK(CountOp(g, "ReduceSum") == 2);
  CHECK(CountOp(g, "GeluGrad") == 1);
  const Node* original = FindNode(g, "Gelu_1");
  const Node* clone = FindNode(g, "Gelu_1_recompute");
  REQUIRE(original != nullptr);
  REQUIRE(clone != nullptr);
  CHECK(g.ToProto(*clone).input(0) == g.ToProto(*original).input(0));
  CHECK(g.ToProto(*clone).input(0) == "com.microsoft::Gelu_5");
  CHECK(g.ToProto(*clone).output(0) == "onnx::Gemm_6_recompute");
  CHECK(clone->proto.doc_string() == "Recompute of Gelu_1");
  CHECK(clone->domain == "com.microsoft");
  // The weight-gradient Gemm reads the recomputed activation; the forward Gemm the original.
  CHECK(g.ToProto(*FindNode(g, "Gemm_2_Grad/Gemm_1")).input(1) == "onnx::Gemm_6_recompute");
  CHECK(g.ToProto(*FindNode(g, "Gemm_2")).input(0) == "onnx::Gemm_6");
  CheckRewriteInvariants(s.model.graph, s.scan, o);
  // The clone runs right before its backward consumer.
  const ExecutionOrder& order = o.rewritten.order;
  CHECK(order.position[clone->id] + 1 == order.position[FindNode(g, "Gemm_2_Grad/Gemm_1")->id]);
  CHECK(order.IsBackward(clone->id));
}

TEST_CASE("rewrite: ORT TileRecompute on recompute_tile.onnx", "[rewrite]") {
  auto path = testing::SharedData("ort_recompute/recompute_tile.onnx");
  if (!path) return;
  Scanned s = ScanFile(*path, 1);
  PlanOutcome o = Outcome(s, Select(s, R"(["Expand+Tile+:1:-1"])"));
  const Graph& g = o.rewritten.graph;
  CHECK(CountOp(g, "Tile") == 2);
  CHECK(CountOp(g, "YieldOp") == 1);
  CHECK(CountOp(g, "FusedMatMul") == 3);
  const Node* tile = FindNode(g, "Tile_26");
  const Node* tile_clone = FindNode(g, "Tile_26_recompute");
  REQUIRE(tile != nullptr);
  REQUIRE(tile_clone != nullptr);
  const Node* expand_clone = Producer(g, tile_clone->inputs[0]);
  REQUIRE(expand_clone != nullptr);
  CHECK(expand_clone->name == "Expand_25_recompute");
  CHECK(g.ToProto(*expand_clone).input(0) == g.ToProto(*FindNode(g, "Expand_25")).input(0));
  CHECK(g.ToProto(*expand_clone).input(0) == "input1");
  const Node* query_grad = Producer(g, g.FindValue("query_layer_grad"));
  REQUIRE(query_grad != nullptr);
  CHECK(g.ToProto(*query_grad).input(1) == g.ToProto(*tile_clone).output(0));
  // The repeats input is a stashed boundary: the clone reads the original.
  CHECK(g.ToProto(*tile_clone).input(1) == "onnx::Tile_24");
  CheckRewriteInvariants(s.model.graph, s.scan, o);
}

TEST_CASE("rewrite: ORT TransformerPerLayerRecompute on the 3-layer BLOOM graph", "[rewrite]") {
  auto path = testing::SharedData("ort_recompute/3layer_bloom_optimized_training.onnx");
  if (!path) return;
  Scanned s = ScanFile(*path, 1);
  PlanOutcome o = Outcome(s, testing::LevelPlans(s));
  const Graph& g = o.rewritten.graph;
  CheckRewriteInvariants(s.model.graph, s.scan, o);
  auto consumers_of = [&](const std::string& weight, const std::string& op) {
    std::vector<const Node*> out;
    ValueId w = g.FindValue(weight);
    REQUIRE(w != kNone);
    for (const auto& [c, slot] : g.values[w].consumers) {
      if (g.nodes[c].op_type == op) out.push_back(&g.nodes[c]);
    }
    return out;
  };
  for (int layer = 2; layer >= 0; --layer) {
    INFO("layer " << layer);
    const std::string prefix = "_original_module._original_model.transformer.h." + std::to_string(layer) + ".";
    std::vector<const Node*> lns = consumers_of(prefix + "input_layernorm.weight", "LayerNormalization");
    REQUIRE(lns.size() == 2);
    int recomputed = 0;
    for (const Node* ln : lns) {
      recomputed += testing::EndsWith(ln->name, "_recompute");
      const Node* input = Producer(g, ln->inputs[0]);
      REQUIRE(input != nullptr);
      CHECK(input->name.find("_recompute") == std::string::npos);
    }
    CHECK(recomputed == 1);
    CHECK(consumers_of(prefix + "input_layernorm.weight", "LayerNormalizationGrad").size() == 1);

    std::vector<const Node*> post = consumers_of(prefix + "post_attention_layernorm.weight", "LayerNormalization");
    REQUIRE(post.size() == 2);
    for (const Node* ln : post) {
      if (!testing::EndsWith(ln->name, "_recompute")) continue;
      const Node* input = Producer(g, ln->inputs[0]);
      REQUIRE(input != nullptr);
      CHECK(input->op_type == "Add");
      CHECK(input->name.find("_recompute") != std::string::npos);
    }
    CHECK(consumers_of(prefix + "post_attention_layernorm.weight", "LayerNormalizationGrad").size() == 1);
  }
}

/// b = Neg(x), c = Sin(b), d = Add(c, c): all three are stashed, so each plan recomputes one node
/// and reads the stash before it; applying all three chains the clones.
constexpr const char* kChainGraph = R"(
    <ir_version: 8, opset_import: ["" : 15, "com.microsoft" : 1]>
    g (float[4] x) => (float[4] gx) {
      b = Neg(x)
      c = Sin(b)
      d = Add(c, c)
      y = com.microsoft.YieldOp <full_shape_outputs = [0]> (d)
      e = Mul(y, d)
      f = Mul(e, c)
      gx = Mul(f, b)
    })";

TEST_CASE("rewrite: shared clones are reused and later plans chain onto earlier recomputes", "[rewrite]") {
  Model m = testing::NamedTextModel(kChainGraph, {"neg", "sin", "add", "yield", "mul_d", "mul_c", "mul_b"});
  Scanned s = testing::ScanModel(std::move(m), 0);
  std::vector<size_t> all;
  for (size_t i = 0; i < s.scan.plans.size(); ++i) all.push_back(i);
  REQUIRE(s.scan.plans.size() == 3);  // add, sin, neg (reverse execution order)
  PlanOutcome o = Outcome(s, all);
  const Graph& g = o.rewritten.graph;
  CheckRewriteInvariants(s.model.graph, s.scan, o);
  // One clone per node although plans overlap; the Add clone reads the Sin clone (chaining).
  CHECK(o.spec.clones.size() == 3);
  const Node* add_clone = FindNode(g, "add_recompute");
  REQUIRE(add_clone != nullptr);
  CHECK(g.ToProto(*add_clone).input(0) == "c_recompute");
  CHECK(g.ToProto(*add_clone).input(1) == "c_recompute");
  CHECK(g.ToProto(*FindNode(g, "sin_recompute")).input(0) == "b_recompute");
  CHECK(g.ToProto(*FindNode(g, "neg_recompute")).input(0) == "x");
  CHECK(g.ToProto(*FindNode(g, "mul_d")).input(1) == "d_recompute");
  CHECK(g.ToProto(*FindNode(g, "mul_c")).input(1) == "c_recompute");
  CHECK(g.ToProto(*FindNode(g, "mul_b")).input(1) == "b_recompute");
  // Written order: each clone right before its first reader, its own clone inputs first.
  std::vector<std::string> names;
  for (const Node& n : g.nodes) names.push_back(n.name);
  CHECK(names == std::vector<std::string>{"neg", "sin", "add", "yield", "neg_recompute", "sin_recompute",
                                          "add_recompute", "mul_d", "mul_c", "mul_b"});
}

TEST_CASE("rewrite: Dropout gets a seed on the original and the clone", "[rewrite]") {
  Model m = testing::NamedTextModel(R"(
    <ir_version: 8, opset_import: ["" : 15, "com.microsoft" : 1]>
    g (float[4] x, float r, bool t) => (float[4] gx) {
      a, mask = Dropout(x, r, t)
      y = com.microsoft.YieldOp <full_shape_outputs = [0]> (a)
      gx = Mul(y, a)
    })",
                                    {"drop", "yield", "mul"});
  Scanned s = testing::ScanModel(std::move(m), 1);
  REQUIRE(s.scan.plans.size() == 1);
  PlanOutcome o = Outcome(s, {0});
  const Graph& g = o.rewritten.graph;
  CheckRewriteInvariants(s.model.graph, s.scan, o);
  const Node* drop = FindNode(g, "drop");
  const Node* clone = FindNode(g, "drop_recompute");
  REQUIRE(clone != nullptr);
  REQUIRE(drop->HasAttr("seed"));
  CHECK(drop->GetInt("seed", 0) == DropoutSeedFor("a"));
  CHECK(clone->GetInt("seed", 0) == DropoutSeedFor("a"));
  CHECK(g.ToProto(*clone).output(1) == "mask_recompute");
  CHECK(o.spec.seeded_dropouts == std::vector<NodeId>{drop->id});
  // h = h * 101 + c over "a" = 97.
  CHECK(DropoutSeedFor("a") == 97);
  CHECK(DropoutSeedFor("ab") == 97 * 101 + 98);
}

TEST_CASE("rewrite: a graph rewritten before cannot clone under a taken name", "[rewrite]") {
  Model m = testing::NamedTextModel(R"(
    <ir_version: 8, opset_import: ["" : 15, "com.microsoft" : 1]>
    g (float[4] x) => (float[4] gx, float[4] c_recompute) {
      c = Sin(x)
      y = com.microsoft.YieldOp <full_shape_outputs = [0]> (c)
      c_recompute = Neg(x)
      gx = Mul(y, c)
    })",
                                    {"sin", "yield", "other", "mul"});
  Scanned s = testing::ScanModel(std::move(m), 1);
  REQUIRE(s.scan.plans.size() == 1);
  RewriteSpecBuilder builder(s.model.graph, s.scan);
  CHECK_FALSE(builder.Supported(0));
  Expected<RewriteSpec> spec = builder.Build({0});
  REQUIRE_FALSE(spec.ok());
  CHECK(spec.status().message().find("already has a tensor named 'c_recompute'") != std::string::npos);
}

TEST_CASE("rewrite: every clone gets a unique node name, unnamed nodes included (level 2)", "[rewrite]") {
  // ORT names the clone of an unnamed node "_recompute", so two such clones collide and ORT
  // refuses the model. memopt names them after their first output, and numbers a taken name.
  Model m = testing::NamedTextModel(kChainGraph, {"", "", "add", "yield", "b_recompute", "", "mul_b"});
  Scanned s = testing::ScanModel(std::move(m), 2);
  std::vector<size_t> all;
  for (size_t i = 0; i < s.scan.plans.size(); ++i) all.push_back(i);
  REQUIRE(s.scan.plans.size() >= 3);
  PlanOutcome o = Outcome(s, all);
  const Graph& g = o.rewritten.graph;
  CheckRewriteInvariants(s.model.graph, s.scan, o);
  std::set<std::string> names;
  for (const Node& n : g.nodes) {
    if (n.name.empty()) continue;
    INFO("node " << n.name);
    CHECK(names.insert(n.name).second);  // unique
    CHECK(n.proto.name() == n.name);
  }
  CHECK(FindNode(g, "add_recompute") != nullptr);  // named nodes keep ORT's name
  CHECK(FindNode(g, "c_recompute") != nullptr);    // unnamed Sin: its output's name
  CHECK(FindNode(g, "b_recompute_1") != nullptr);  // unnamed Neg: "b_recompute" is a node already
  CHECK(FindNode(g, "b_recompute_1")->proto.doc_string() == "Recompute of an unnamed Neg node");
}

}  // namespace
}  // namespace memopt
