#include "analysis/exec_order.h"

#include <catch2/catch.hpp>

#include "helpers/analysis_test_util.h"
#include "analysis/boundary.h"
#include "test_data.h"

namespace memopt {
namespace {

using testing::NodeNames;
using testing::TextModel;

ExecutionOrder OrderOf(const Graph& graph) {
  Expected<Boundary> boundary = FindBoundary(graph, ScanOptions{});
  REQUIRE(boundary.ok());
  Expected<ExecutionOrder> order = MemoryEfficientOrder(graph, *boundary);
  INFO(order.status().message());
  REQUIRE(order.ok());
  return std::move(order).value();
}

// The three MEMORY_EFFICIENT cases of onnxruntime/test/ir/graph_test.cc (reference §9.2),
// rebuilt with standard ops (Identity for Identity_Fake, Add for Merge_Fake), same node order.
TEST_CASE("memory-efficient order: recompute branch before its consumer", "[analysis][exec_order]") {
  Model m = TextModel(R"(
    <ir_version: 8, opset_import: ["" : 15, "com.microsoft" : 1]>
    g (int32[1] node_0_in_1) => (int32[1] node_5_out_1) {
      node_0_out_1 = Identity(node_0_in_1)
      node_1_out_1 = Identity(node_0_out_1)
      node_2_out_1 = Identity(node_0_out_1)
      node_4_out_1 = Identity(node_1_out_1)
      node_yield_out_1 = com.microsoft.YieldOp <full_shape_outputs = [0]> (node_4_out_1)
      node_5_out_1 = Add(node_yield_out_1, node_2_out_1)
    })",
                      {"node_0", "node_1", "recompute_node_1", "node_4", "node_yield", "node_1_grad"});
  ExecutionOrder order = OrderOf(m.graph);
  CHECK(NodeNames(m.graph, order.order) ==
        std::vector<std::string>{"node_0", "node_1", "node_4", "node_yield", "recompute_node_1", "node_1_grad"});
  CHECK(order.last_forward == 3);
}

TEST_CASE("memory-efficient order: multi-layer recompute", "[analysis][exec_order]") {
  Model m = TextModel(R"(
    <ir_version: 8, opset_import: ["" : 15, "com.microsoft" : 1]>
    g (int32[1] node_0_in) => (int32[1] node_1_grad_output) {
      node_0_out = Identity(node_0_in)
      node_1_out = Identity(node_0_out)
      node_2_out = Identity(node_1_out)
      node_3_out = Identity(node_2_out)
      loss_out = Identity(node_3_out)
      yield_out = com.microsoft.YieldOp <full_shape_outputs = [0]> (loss_out)
      node_3_out_recomputed = Identity(node_2_out)
      node_2_out_recomputed = Identity(node_1_out)
      node_1_out_recomputed = Identity(node_0_out)
      loss_grad_output = Add(yield_out, node_3_out)
      node_3_grad_output = Add(loss_grad_output, node_3_out_recomputed)
      node_2_grad_output = Add(node_3_grad_output, node_2_out_recomputed)
      node_1_grad_output = Add(node_2_grad_output, node_1_out_recomputed)
    })",
                      {"node_0", "node_1", "node_2", "node_3", "loss", "node_yield", "node_3_recompute",
                       "node_2_recompute", "node_1_recompute", "loss_grad", "node_3_grad", "node_2_grad",
                       "node_1_grad"});
  ExecutionOrder order = OrderOf(m.graph);
  CHECK(NodeNames(m.graph, order.order) ==
        std::vector<std::string>{"node_0", "node_1", "node_2", "node_3", "loss", "node_yield", "loss_grad",
                                 "node_3_recompute", "node_3_grad", "node_2_recompute", "node_2_grad",
                                 "node_1_recompute", "node_1_grad"});
  CHECK(order.last_forward == 5);
}

TEST_CASE("memory-efficient order: unconsumed branch outputs go last, by output name", "[analysis][exec_order]") {
  Model m = TextModel(R"(
    <ir_version: 8, opset_import: ["" : 15, "com.microsoft" : 1]>
    g (int32[1] node_0_in_1) => (int32[1] node_5_out_1, int32[1] graphoutput_0_identity_out_1,
                                 int32[1] graphoutput_1_identity_out_1) {
      node_0_out_1 = Identity(node_0_in_1)
      node_1_out_1 = Identity(node_0_out_1)
      graphoutput_0_identity_out_1 = Identity(node_0_out_1)
      node_2_out_1 = Identity(node_0_out_1)
      graphoutput_1_identity_out_1 = Identity(node_2_out_1)
      node_4_out_1 = Identity(node_1_out_1)
      node_yield_out_1 = com.microsoft.YieldOp <full_shape_outputs = [0]> (node_4_out_1)
      node_5_out_1 = Add(node_yield_out_1, node_2_out_1)
    })",
                      {"node_0", "node_1", "graph_output_0_identity", "recompute_node_1", "graph_output_1_identity",
                       "node_4", "node_yield", "node_1_grad"});
  ExecutionOrder order = OrderOf(m.graph);
  CHECK(NodeNames(m.graph, order.order) ==
        std::vector<std::string>{"node_0", "node_1", "node_4", "node_yield", "recompute_node_1", "node_1_grad",
                                 "graph_output_0_identity", "graph_output_1_identity"});
}

TEST_CASE("memory-efficient order: deepest producer explored first, ties by larger id", "[analysis][exec_order]") {
  // d = Add(c, b): b is deeper (max_distance 1 vs 0), so a, b come before c.
  // r = Add(p, q): p and q tie, the larger id (q) is explored first.
  Model m = TextModel(R"(
    <ir_version: 8, opset_import: ["" : 15, "com.microsoft" : 1]>
    g (float[2] x) => (float[2] g_out) {
      a = Identity(x)
      b = Identity(a)
      c = Identity(x)
      d = Add(c, b)
      p = Identity(d)
      q = Identity(d)
      r = Add(p, q)
      y = com.microsoft.YieldOp <full_shape_outputs = [0]> (r)
      g_out = Identity(y)
    })",
                      {"a", "b", "c", "d", "p", "q", "r", "yield", "g"});
  ExecutionOrder order = OrderOf(m.graph);
  CHECK(NodeNames(m.graph, order.order) ==
        std::vector<std::string>{"a", "b", "c", "d", "q", "p", "r", "yield", "g"});
  std::vector<NodeId> topo = TopologicalOrder(m.graph).value();
  std::vector<int32_t> distance = MaxDistances(m.graph, topo);
  CHECK(distance == std::vector<int32_t>{0, 1, 0, 2, 3, 3, 4, 5, 6});
}

TEST_CASE("memory-efficient order: --boundary NODE", "[analysis][exec_order]") {
  auto path = testing::SharedData("ort_recompute/recompute_gelu.onnx");
  if (!path) return;
  Model m = testing::LoadShaped(*path);
  ExecutionOrder automatic = OrderOf(m.graph);
  ScanOptions options;
  options.boundary_node = "YieldOp";  // naming the YieldOp changes nothing
  Boundary b = FindBoundary(m.graph, options).value();
  CHECK(b.kind == Boundary::Kind::kOverride);
  ExecutionOrder named = MemoryEfficientOrder(m.graph, b).value();
  CHECK(named.order == automatic.order);
  CHECK(named.last_forward == automatic.last_forward);

  options.boundary_node = "Gelu_1";  // Gemm_2 and the YieldOp become backward
  b = FindBoundary(m.graph, options).value();
  ExecutionOrder early = MemoryEfficientOrder(m.graph, b).value();
  CHECK(early.last_forward == 1);
  CHECK(NodeNames(m.graph, std::vector<NodeId>(early.order.begin(), early.order.begin() + 3)) ==
        std::vector<std::string>{"Gemm_0", "Gelu_1", "Gemm_2"});
  CHECK(early.IsBackward(testing::NodeByName(m.graph, "YieldOp")));
  CHECK(early.order.size() == m.graph.nodes.size());
}

TEST_CASE("topological order: smallest ready id first, cycles are named", "[analysis][exec_order]") {
  Model m = TextModel(R"(
    <ir_version: 8, opset_import: ["" : 15]>
    g (float[2] x) => (float[2] z) {
      z = Add(y, w)
      y = Identity(x)
      w = Identity(x)
    })",
                      {"add", "id_y", "id_w"});
  Expected<std::vector<NodeId>> topo = TopologicalOrder(m.graph);
  REQUIRE(topo.ok());
  CHECK(NodeNames(m.graph, *topo) == std::vector<std::string>{"id_y", "id_w", "add"});

  Expected<Model> cyclic = LoadModelFromText(R"(
    <ir_version: 8, opset_import: ["" : 15]>
    g (float[2] x) => (float[2] z) {
      a = Add(x, b)
      b = Identity(a)
      z = Identity(b)
    })");
  REQUIRE(cyclic.ok());
  cyclic->graph.nodes[0].name = "n_add";
  cyclic->graph.nodes[1].name = "n_id";
  Expected<std::vector<NodeId>> bad = TopologicalOrder(cyclic->graph);
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.status().message(), Catch::Contains("graph has a cycle through node 'n_"));
  Expected<ExecutionOrder> bad_order = MemoryEfficientOrder(cyclic->graph, Boundary{});
  CHECK_FALSE(bad_order.ok());
}

TEST_CASE("memory-efficient order: Shape of a forward tensor moves into the forward pass", "[analysis][exec_order]") {
  auto path = testing::SharedData("ort_recompute/recompute_tile.onnx");
  if (!path) return;
  Model m = testing::LoadShaped(*path);
  ExecutionOrder order = OrderOf(m.graph);
  const NodeId expand = testing::NodeByName(m.graph, "Expand_25");
  const NodeId shape = testing::NodeByName(m.graph, "Tile_26_Grad/Shape_0");
  const NodeId yield = testing::NodeByName(m.graph, "YieldOp");
  CHECK(order.position[shape] == order.position[expand] + 1);
  CHECK(order.IsForward(shape));
  CHECK(order.position[yield] == order.last_forward);
  CHECK(order.last_forward == 9);  // 8 forward nodes + the relocated Shape, then the YieldOp
  CHECK(order.order.size() == m.graph.nodes.size());
}

TEST_CASE("execution order: loss rule and forward-only graphs", "[analysis][exec_order]") {
  if (auto path = testing::SharedData("ort_training_api/training_model.onnx")) {
    Model m = testing::LoadShaped(*path);
    ExecutionOrder order = OrderOf(m.graph);
    CHECK(order.last_forward == 3);
    CHECK(NodeNames(m.graph, std::vector<NodeId>(order.order.begin(), order.order.begin() + 4)) ==
          std::vector<std::string>{"/fc1/Gemm", "/relu/Relu", "/fc2/Gemm", "onnx::SoftmaxCrossEntropyLoss::62639"});
    CHECK(order.order.size() == m.graph.nodes.size());
  }
  if (auto path = testing::SharedData("forward/gpt2_megatron.onnx")) {
    Model m = testing::LoadShaped(*path);
    ExecutionOrder order = OrderOf(m.graph);
    CHECK(order.order.size() == m.graph.nodes.size());
    CHECK(order.last_forward == static_cast<int32_t>(m.graph.nodes.size()) - 1);
    // Every node after its producers.
    for (const Node& node : m.graph.nodes) {
      for (const InEdge& e : InputEdges(m.graph, node.id)) CHECK(order.position[e.producer] < order.position[node.id]);
    }
  }
}

}  // namespace
}  // namespace memopt
