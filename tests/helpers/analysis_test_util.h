// Helpers shared by the lib/analysis unit tests (header only; not part of memopt_lib).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <catch2/catch.hpp>

#include "analysis/scan.h"
#include "io/model_loader.h"
#include "shape/shape_infer.h"

namespace memopt::testing {

/// Loads a model and infers shapes; fails the test on error.
inline Model LoadShaped(const std::string& path) {
  Expected<Model> model = LoadModel(path);
  INFO(model.status().message());
  REQUIRE(model.ok());
  Expected<ShapeInferenceStats> stats = InferShapes(model->graph);
  INFO(stats.status().message());
  REQUIRE(stats.ok());
  return std::move(model).value();
}

/// Parses a text model (the ONNX text syntax has no node names), names its nodes in order from
/// `names` and infers shapes.
inline Model TextModel(std::string_view text, const std::vector<std::string>& names) {
  Expected<Model> model = LoadModelFromText(text);
  INFO(model.status().message());
  REQUIRE(model.ok());
  REQUIRE(model->graph.nodes.size() == names.size());
  for (size_t i = 0; i < names.size(); ++i) model->graph.nodes[i].name = names[i];
  Expected<ShapeInferenceStats> stats = InferShapes(model->graph);
  INFO(stats.status().message());
  REQUIRE(stats.ok());
  return std::move(model).value();
}

/// The text of a training graph whose stashed Mul reads an fp16 -> fp32 Cast of a graph input:
/// the recompute search finds a type-1 plan through the Cast and, as ORT 1.19.2 does, a type-2
/// plan that stops at it, both "Cast+Mul+". Node names: cast, mul, yield, mul_grad.
constexpr const char* kCastMulTrainingGraph = R"(
    <ir_version: 8, opset_import: ["" : 15, "com.microsoft" : 1]>
    g (float16[N, 4] x) => (float[N, 4] out) {
      c = Cast <to = 1> (x)
      prod = Mul(c, c)
      y = com.microsoft.YieldOp <full_shape_outputs = [0]> (prod)
      out = Mul(y, prod)
    })";
inline const std::vector<std::string> kCastMulTrainingNames = {"cast", "mul", "yield", "mul_grad"};

inline NodeId NodeByName(const Graph& graph, const std::string& name) {
  for (const Node& node : graph.nodes) {
    if (node.name == name) return node.id;
  }
  FAIL("no node named " << name);
  return kNone;
}

inline std::vector<std::string> NodeNames(const Graph& graph, const std::vector<NodeId>& nodes) {
  std::vector<std::string> names;
  for (NodeId n : nodes) names.push_back(graph.nodes[n].name);
  return names;
}

}  // namespace memopt::testing
