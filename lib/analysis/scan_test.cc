#include "analysis/scan.h"

#include <chrono>
#include <filesystem>

#include <catch2/catch.hpp>

#include "helpers/analysis_test_util.h"
#include "test_data.h"

namespace memopt {
namespace {

using testing::NodeByName;
using testing::NodeNames;

const PlanGroup* GroupByConfig(const ScanResult& r, const std::string& config) {
  for (const PlanGroup& g : r.groups) {
    if (g.config == config) return &g;
  }
  return nullptr;
}

std::vector<std::string> Configs(const ScanResult& r) {
  std::vector<std::string> configs;
  for (const PlanGroup& g : r.groups) configs.push_back(g.config);
  return configs;
}

TEST_CASE("scan: recompute_gelu.onnx at level 1", "[analysis][scan]") {
  auto path = testing::SharedData("ort_recompute/recompute_gelu.onnx");
  if (!path) return;
  Model m = testing::LoadShaped(*path);
  ScanOptions options;
  Expected<ScanResult> r = Scan(m.graph, options);
  INFO(r.status().message());
  REQUIRE(r.ok());
  CHECK(r->boundary.kind == Boundary::Kind::kYieldOp);
  // Equal savings: ordered by config.
  CHECK(Configs(*r) == std::vector<std::string>{"Gelu+:1:-1", "Gemm+:1:-1"});
  const PlanGroup& gelu = r->groups[0];
  CHECK(gelu.freq == 1);
  CHECK(r->groups[1].freq == 1);
  REQUIRE(gelu.saving.has_value());
  CHECK(*gelu.saving == SymExpr(2000) * SymExpr::Symbol("input1_dim0"));
  CHECK(gelu.saving->ToSympyString() == "2000.0*input1_dim0");
  CHECK_FALSE(gelu.saving_bytes.has_value());
  CHECK_FALSE(r->peak.sized);

  options.dims.Set("input1_dim0", 10);
  Expected<ScanResult> bound = Scan(m.graph, options);
  REQUIRE(bound.ok());
  CHECK(bound->groups[0].saving_bytes == 20000);
  CHECK(bound->peak.unbound_dims == std::vector<std::string>{"input1_dim1"});  // input1 is [dim0, dim1]
  options.dims.Set("input1_dim1", 784);
  bound = Scan(m.graph, options);
  REQUIRE(bound.ok());
  CHECK(bound->peak.sized);
}

TEST_CASE("scan: recompute_tile.onnx", "[analysis][scan]") {
  auto path = testing::SharedData("ort_recompute/recompute_tile.onnx");
  if (!path) return;
  Model m = testing::LoadShaped(*path);
  Expected<ScanResult> r = Scan(m.graph, ScanOptions{});
  REQUIRE(r.ok());
  CHECK(GroupByConfig(*r, "Expand+Tile+:1:-1") != nullptr);
  CHECK(GroupByConfig(*r, "ConcatTraining+:1:-1") != nullptr);
}

// Groups at level 1 (saving symbols: B = inputs_input_ids_dim0, S = inputs_attention_mask_dim1):
//   CumSum+Sub+Mul+Unsqueeze+Cast+Mul+Cast+Reshape+MatMul+Mul+Add+Reshape+Cast+Where+Softmax+  freq 2  128*S^2*B
//   Cast+Reshape+                                  freq 3  96*S^2*B     (fp32 probs -> fp16, [B*16,S,S])
//   MatMul+Mul+CumSum+...+Where+Softmax+           freq 1  64*S^2*B     (same softmax, Q.K^T not stashed)
//   MatMul+                                        freq 3  24576*S*B    (dense_h_to_4h, [B,S,4096] fp16)
//   MatMul+Add+Reshape+Split+Squeeze+Transpose+Reshape+  freq 9  18432*S*B  (query/key/value)
//   FastGelu+                                      freq 2  16384*S*B    (layers 0 and 1)
//   LayerNormalization+                            freq 7  14392*S*B - 2056*B  (all 3 outputs counted)
//   FastGelu+Slice+Reshape+                        freq 1  8192*S*B - 8192*B   (layer 2: its output is sliced)
//   MatMul+Add+Add+                                freq 3  6144*S*B     (attention dense + residual Add)
//   MatMul+Reshape+Transpose+Reshape+              freq 3  6144*S*B
//   MatMul+Add+Slice+Reshape+Add+                  freq 1  2048*S*B - 2048*B
//   Transpose+                                     freq 13 589299712    (weights transposed: constant)
//   Slice+Reshape+                                 freq 1  8*L0*L1 - 8*L0 (shifted labels)
// Per reference rules: the fp32 softmax is stashed and recomputed from the alibi/mask path; layer
// 2's FastGelu output is read by backward only through a Slice and a relocated Shape, so the
// Slice+Reshape after it is the stashed node and the FastGelu joins its subgraph.
TEST_CASE("scan: 3-layer BLOOM at level 1", "[analysis][scan]") {
  auto path = testing::SharedData("ort_recompute/3layer_bloom_optimized_training.onnx");
  if (!path) return;
  Model m = testing::LoadShaped(*path);
  Expected<ScanResult> r = Scan(m.graph, ScanOptions{});
  INFO(r.status().message());
  REQUIRE(r.ok());
  CHECK(NodeNames(m.graph, r->layer_boundaries) ==
        std::vector<std::string>{"LayerNormalization_token_0", "LayerNormalization_token_6",
                                 "LayerNormalization_token_12"});
  std::string listing;
  for (const PlanGroup& g : r->groups) {
    listing += g.config + " freq " + std::to_string(g.freq) + " " +
               (g.saving ? g.saving->ToSympyString() : std::string("?")) + "\n";
  }
  INFO(listing);
  CHECK(r->groups.size() == 13);
  const PlanGroup* fast_gelu = GroupByConfig(*r, "FastGelu+:1:-1");
  REQUIRE(fast_gelu != nullptr);
  CHECK(fast_gelu->freq == 2);
  const SymExpr batch = SymExpr::Symbol("inputs_input_ids_dim0");
  const SymExpr seq = SymExpr::Symbol("inputs_attention_mask_dim1");
  CHECK(*fast_gelu->saving == SymExpr(16384) * batch * seq);
  const PlanGroup* sliced = GroupByConfig(*r, "FastGelu+Slice+Reshape+:1:-1");
  REQUIRE(sliced != nullptr);
  CHECK(sliced->freq == 1);
  const PlanGroup* ln = GroupByConfig(*r, "LayerNormalization+:1:-1");
  REQUIRE(ln != nullptr);
  CHECK(ln->freq == 7);
  CHECK(GroupByConfig(*r, "MatMul+Add+Add+:1:-1") != nullptr);
  for (const PlanGroup& g : r->groups) CHECK(g.type == 1);

  // Upstream TransformerPerLayerRecompute, in plan terms: per layer, the input LayerNorm is
  // recomputed but its input (the layer input) stays stashed; the post-attention LayerNorm is
  // recomputed and so is the residual Add feeding it.
  auto plan_of = [&](NodeId n) -> const RecomputePlan* {
    for (const RecomputePlan& p : r->plans) {
      if (p.entry == n) return &p;
    }
    return nullptr;
  };
  auto ln_reading = [&](const std::string& weight) {
    ValueId v = m.graph.FindValue(weight);
    REQUIRE(v != kNone);
    for (const auto& [consumer, slot] : m.graph.values[v].consumers) {
      if (m.graph.nodes[consumer].op_type == "LayerNormalization") return consumer;
    }
    FAIL("no LayerNormalization reads " << weight);
    return kNone;
  };
  for (int layer = 0; layer < 3; ++layer) {
    INFO("layer " << layer);
    const std::string prefix = "_original_module._original_model.transformer.h." + std::to_string(layer);
    NodeId input_ln = ln_reading(prefix + ".input_layernorm.weight");
    CHECK(plan_of(input_ln) != nullptr);
    CHECK(plan_of(m.graph.values[m.graph.nodes[input_ln].inputs[0]].producer) == nullptr);
    NodeId post_ln = ln_reading(prefix + ".post_attention_layernorm.weight");
    CHECK(plan_of(post_ln) != nullptr);
    NodeId residual = m.graph.values[m.graph.nodes[post_ln].inputs[0]].producer;
    CHECK(m.graph.nodes[residual].op_type == "Add");
    CHECK(plan_of(residual) != nullptr);
  }

  // No boundary LayerNorm's input 0 producer gets a plan (the layer input stays stashed).
  for (NodeId boundary_ln : r->layer_boundaries) {
    NodeId producer = m.graph.values[m.graph.nodes[boundary_ln].inputs[0]].producer;
    CHECK(plan_of(producer) == nullptr);
  }
  CHECK(r->peak.peak_position >= 0);
  CHECK_FALSE(r->peak.sized);
}

TEST_CASE("scan: 3-layer BLOOM without layer boundaries and at level 2", "[analysis][scan]") {
  auto path = testing::SharedData("ort_recompute/3layer_bloom_optimized_training.onnx");
  if (!path) return;
  Model m = testing::LoadShaped(*path);
  ScanOptions options;
  options.layer_boundary = false;
  Expected<ScanResult> r = Scan(m.graph, options);
  REQUIRE(r.ok());
  CHECK(r->layer_boundaries.empty());
  options.layer_boundary = std::nullopt;
  options.level = 2;
  Expected<ScanResult> r2 = Scan(m.graph, options);
  REQUIRE(r2.ok());
  std::string listing;
  for (const PlanGroup& g : r2->groups) listing += g.config + " freq " + std::to_string(g.freq) + "\n";
  INFO(listing);
  CHECK(r2->groups.size() >= 13);
}

TEST_CASE("scan: every ort_training_api and forward model", "[analysis][scan]") {
  auto training = testing::SharedData("ort_training_api/training_model.onnx");
  if (!training) return;
  for (const char* rel : {"ort_training_api/training_model.onnx", "ort_training_api/eval_model.onnx",
                          "forward/bert_toy_optimized.onnx", "forward/gpt2_megatron.onnx",
                          "forward/TFBertForQuestionAnswering.onnx"}) {
    auto path = testing::SharedData(rel);
    if (!path) return;
    INFO(rel);
    Model m = testing::LoadShaped(*path);
    Expected<ScanResult> r = Scan(m.graph, ScanOptions{});
    INFO(r.status().message());
    REQUIRE(r.ok());
    CHECK(r->order.order.size() == m.graph.nodes.size());
    CHECK(r->peak.peak_position >= 0);
    if (std::string(rel).rfind("forward/", 0) == 0 || std::string(rel).find("eval_model") != std::string::npos) {
      CHECK(r->boundary.kind == Boundary::Kind::kNone);
      CHECK(r->plans.empty());
      CHECK(r->stashed_nodes.empty());
    }
  }
}

TEST_CASE("scan: options are validated", "[analysis][scan]") {
  Model m = testing::TextModel(R"(
    <ir_version: 8, opset_import: ["" : 15]>
    g (float[2] x) => (float[2] y) { y = Relu(x) })",
                               {"relu"});
  ScanOptions options;
  options.level = 3;
  Expected<ScanResult> r = Scan(m.graph, options);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == ErrorCode::kUsage);
}

}  // namespace
}  // namespace memopt
