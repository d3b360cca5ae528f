// Per-block checkpointing (plan/layer_checkpoint.h): blocks from module paths (the exporter's
// metadata, TorchScript names), else from transformer layer boundaries; every stash inside a block
// recomputed from the block's input, the block's outputs kept.
#include "plan/layer_checkpoint.h"

#include <set>

#include "helpers/plan_test_util.h"
#include "plan/plan_evaluator.h"

namespace memopt {
namespace {

std::string KeyOf(const Graph& g, const CheckpointBlocks& blocks, const std::string& node) {
  const Node* n = testing::FindNode(g, node);
  REQUIRE(n != nullptr);
  return blocks.key[n->id];
}

/// Every plan's nodes lie in its entry's block; no block output is recomputed.
void CheckPlansInsideBlocks(const testing::Scanned& s, const CheckpointBlocks& blocks, const ScanResult& plans) {
  const Graph& g = s.model.graph;
  for (const RecomputePlan& p : plans.plans) {
    INFO("plan of " << g.nodes[p.entry].name);
    const std::string& key = blocks.key[p.entry];
    REQUIRE_FALSE(key.empty());
    CHECK(p.cluster_id == "checkpoint(" + key + ")");
    CHECK(p.subgraph.back() == p.entry);
    for (NodeId n : p.subgraph) {
      CHECK(blocks.key[n] == key);
      CHECK(s.scan.order.IsForward(n));
    }
    for (const StashedOutput& o : p.outputs) {
      for (const auto& [c, slot] : g.values[o.value].consumers) {
        if (s.scan.order.IsForward(c)) CHECK(blocks.key[c] == key);
      }
    }
  }
}

TEST_CASE("per-block checkpointing: a ConvNet's blocks are its top-level modules", "[plan][checkpoint]") {
  auto path = testing::DataPath("src:tests/data/plan/convnet_residual_train.onnx");
  if (!path) return;
  testing::Scanned s = testing::ScanFile(*path, 1, "", &OpTable::Extended());
  const Graph& g = s.model.graph;
  const CheckpointBlocks blocks = FindCheckpointBlocks(g, s.scan);
  CHECK(blocks.source == "modules");
  // The residual block (conv, BN, ReLU twice, the add and the last ReLU) is one block; the stem
  // and the classifier are others.
  for (const char* n : {"node_conv2d_1", "node__native_batch_norm_legit_functional_1__0", "node_relu_1", "node_conv2d_2",
                        "node_add_3", "node_relu_2"}) {
    INFO(n);
    CHECK(KeyOf(g, blocks, n) == "block");
  }
  CHECK(KeyOf(g, blocks, "node_conv2d") == "stem");
  CHECK(KeyOf(g, blocks, "node_linear") == "fc");
  CHECK(KeyOf(g, blocks, "node_sum_1_Grad/Expand_1").empty());  // backward
  const ScanResult plans = LayerCheckpointScan(g, s.scan);
  CheckPlansInsideBlocks(s, blocks, plans);
  // checkpoint(block): conv2d_1, relu_1 and conv2d_2 recomputed from the block's input; relu_2,
  // read by the pooling after the block, kept.
  std::set<std::string> entries;
  for (const RecomputePlan& p : plans.plans) entries.insert(g.nodes[p.entry].name);
  CHECK(entries.count("node_conv2d_1") == 1);
  CHECK(entries.count("node_relu_1") == 1);
  CHECK(entries.count("node_conv2d_2") == 1);
  CHECK(entries.count("node_relu_2") == 0);
  Expected<PlanEvaluator> ev = PlanEvaluator::Create(g, plans, s.dims);
  REQUIRE(ev.ok());
  std::vector<size_t> all(plans.plans.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = i;
  Expected<PlanEvaluation> e = ev->Evaluate(all);
  REQUIRE(e.ok());
  CHECK(e->nodes_added > 0);
}

TEST_CASE("per-block checkpointing: transformer blocks are the numbered layers", "[plan][checkpoint]") {
  auto path = testing::DataPath("src:tests/data/plan/gpt2_tiny_2layer.onnx");
  if (!path) return;
  testing::Scanned s = testing::ScanFile(*path, 1, "batch=4,seq_len=64");
  const Graph& g = s.model.graph;
  const CheckpointBlocks blocks = FindCheckpointBlocks(g, s.scan);
  CHECK(blocks.source == "modules");
  std::set<std::string> keys;
  for (const Node& n : g.nodes) {
    if (!blocks.key[n.id].empty()) keys.insert(blocks.key[n.id]);
  }
  INFO("blocks: " << [&] {
    std::string all;
    for (const auto& k : keys) all += k + "; ";
    return all;
  }());
  // Each layer's nodes share one key that ends in its number.
  int layers = 0;
  for (const auto& k : keys) layers += testing::EndsWith(k, ".0") || testing::EndsWith(k, ".1");
  CHECK(layers == 2);
  const ScanResult plans = LayerCheckpointScan(g, s.scan);
  REQUIRE_FALSE(plans.plans.empty());
  CheckPlansInsideBlocks(s, blocks, plans);
}

TEST_CASE("per-block checkpointing: TorchScript node names give module paths", "[plan][checkpoint]") {
  testing::Scanned s = testing::ScanModel(testing::NamedTextModel(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[4] x) => (float[4] y) {
  a = Relu(x)
  b = Neg(a)
  c = Relu(b)
  d = Neg(c)
  y = Neg(d)
})", {"/layers.0/act/Relu", "/layers.0/Neg", "/layers.1/act/Relu", "/layers.1/Neg", "/head/Neg"}), 1);
  const CheckpointBlocks blocks = FindCheckpointBlocks(s.model.graph, s.scan);
  CHECK(blocks.source == "modules");
  CHECK(KeyOf(s.model.graph, blocks, "/layers.0/act/Relu") == "layers.0");
  CHECK(KeyOf(s.model.graph, blocks, "/layers.0/Neg") == "layers.0");
  CHECK(KeyOf(s.model.graph, blocks, "/layers.1/act/Relu") == "layers.1");
  CHECK(KeyOf(s.model.graph, blocks, "/head/Neg") == "head");
}

TEST_CASE("per-block checkpointing: without module paths, the transformer layers", "[plan][checkpoint]") {
  auto path = testing::DataPath("src:tests/data/plan/gpt_synth_1layer.onnx");
  if (!path) return;
  Model model = testing::LoadShaped(*path);
  for (Node& n : model.graph.nodes) {  // no module paths: plain names, no metadata
    n.name = "n" + std::to_string(n.id);
    n.module.clear();
  }
  testing::Scanned s = testing::ScanModel(std::move(model), 1);
  const CheckpointBlocks blocks = FindCheckpointBlocks(s.model.graph, s.scan);
  REQUIRE(blocks.source == "layer boundaries");
  REQUIRE(s.scan.layer_boundaries.size() == 1);
  // The layer starts at its boundary LayerNorm.
  CHECK(blocks.key[s.scan.layer_boundaries[0]] == "layer 0");
  const ScanResult plans = LayerCheckpointScan(s.model.graph, s.scan);
  REQUIRE_FALSE(plans.plans.empty());
  CheckPlansInsideBlocks(s, blocks, plans);
}

TEST_CASE("per-block checkpointing: no modules and no layers, no blocks", "[plan][checkpoint]") {
  testing::Scanned s = testing::ScanModel(testing::TextModel(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[4] x) => (float[4] y) {
  a = Relu(x)
  y = Neg(a)
})", {"a", "y"}), 1);
  const CheckpointBlocks blocks = FindCheckpointBlocks(s.model.graph, s.scan);
  CHECK(blocks.source.empty());
  CHECK(LayerCheckpointScan(s.model.graph, s.scan).plans.empty());
}

}  // namespace
}  // namespace memopt
