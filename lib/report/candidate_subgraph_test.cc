// Tests of the candidate views: selector parsing, the subgraph, DOT and the extracted model.
#include <catch2/catch.hpp>

#include "helpers/analysis_test_util.h"
#include "report/candidate_subgraph.h"
#include "report/dot.h"
#include "report/extract.h"
#include "test_data.h"

namespace memopt {
namespace {

TEST_CASE("candidate selector: syntax", "[report][candidate]") {
  CandidateSelector s = ParseCandidateSelector("Gelu+").value();
  CHECK((s.cluster_id == "Gelu+" && s.type == 0 && s.occurrence == 0));
  s = ParseCandidateSelector("BiasGelu+Dropout+@12:2").value();
  CHECK((s.cluster_id == "BiasGelu+Dropout+" && s.type == 2 && s.occurrence == 12));
  s = ParseCandidateSelector("Gelu+:1:-1").value();  // a plan-table config string
  CHECK((s.cluster_id == "Gelu+" && s.type == 1));
  for (const char* bad : {"", "@1", "Gelu+@x", "Gelu+:3", "Gelu+:1:2:3", "Gelu+@-1"}) {
    INFO(bad);
    Expected<CandidateSelector> r = ParseCandidateSelector(bad);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == ErrorCode::kUsage);
  }
}

struct Gelu {
  Model model;
  ScanResult scan;
  DimBindings dims;
  explicit Gelu(const std::string& path) : model(testing::LoadShaped(path)) {
    dims.Set("input1_dim0", 16);
    dims.Set("input1_dim1", 784);
    ScanOptions options;
    options.dims = dims;
    scan = Scan(model.graph, options).value();
  }
};

TEST_CASE("candidate subgraph: Gelu+ of recompute_gelu.onnx", "[report][candidate][data]") {
  auto path = testing::SharedData("ort_recompute/recompute_gelu.onnx");
  if (!path) return;
  Gelu g(*path);
  const Graph& graph = g.model.graph;

  Expected<size_t> unknown = FindCandidatePlan(g.scan, ParseCandidateSelector("Gelo+").value());
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.status().message().find("did you mean 'Gelu+'?") != std::string::npos);
  Expected<size_t> past = FindCandidatePlan(g.scan, ParseCandidateSelector("Gelu+@1").value());
  REQUIRE_FALSE(past.ok());
  CHECK(past.status().message().find("occurs 1 time") != std::string::npos);

  const size_t plan = FindCandidatePlan(g.scan, ParseCandidateSelector("Gelu+").value()).value();
  CandidateSubgraph c = BuildCandidateSubgraph(graph, g.scan, plan);
  CHECK((c.occurrence == 0 && c.occurrences == 1));
  CHECK(testing::NodeNames(graph, c.recompute) == std::vector<std::string>{"Gelu_1"});
  REQUIRE(c.inputs.size() == 1);
  CHECK(graph.value(c.inputs[0]).name == "com.microsoft::Gelu_5");
  REQUIRE(c.stashed.size() == 1);
  CHECK(graph.value(c.stashed[0]).name == "onnx::Gemm_6");
  CHECK(testing::NodeNames(graph, c.consumers) == std::vector<std::string>{"Gemm_2_Grad/Gemm_1"});
  REQUIRE(c.consumer_inputs.size() == 1);
  CHECK(graph.value(c.consumer_inputs[0]).name == "output-0_grad");

  const std::string text = RenderCandidateText(graph, g.scan, c, g.dims);
  CHECK(text.find("Candidate Gelu+:1:-1, occurrence 1 of 1") != std::string::npos);
  // [16, 500] float = 32,000 bytes = 31.25 KiB.
  CHECK(text.find("onnx::Gemm_6  float[input1_dim0, 500]  31.25 KiB") != std::string::npos);

  const std::string dot = RenderCandidateDot(graph, g.scan, c, g.dims);
  CHECK(dot.rfind("digraph \"Gelu+:1 occurrence 0\" {", 0) == 0);
  CHECK(dot.find("subgraph cluster_recompute") != std::string::npos);
  CHECK(dot.find("subgraph cluster_backward") != std::string::npos);
  CHECK(dot.find("Gemm_2_Grad/Gemm_1\\nGemm\\nstep") != std::string::npos);
  CHECK(dot.back() == '\n');
}

TEST_CASE("candidate extract: a small valid ONNX model", "[report][candidate][data]") {
  auto path = testing::SharedData("ort_recompute/recompute_gelu.onnx");
  if (!path) return;
  Gelu g(*path);
  const Graph& graph = g.model.graph;
  const size_t plan = FindCandidatePlan(g.scan, ParseCandidateSelector("Gelu+").value()).value();
  CandidateSubgraph c = BuildCandidateSubgraph(graph, g.scan, plan);
  ExtractOptions options;
  options.ir_version = g.model.ir_version;
  std::string bytes = ExtractCandidateModel(graph, g.scan, c, options).value();

  onnx::ModelProto proto;
  REQUIRE(proto.ParseFromString(bytes));
  CHECK(proto.ir_version() == 8);
  CHECK(proto.graph().node_size() == 2);
  CHECK(proto.graph().node(0).name() == "Gelu_1");
  CHECK(proto.graph().node(0).domain() == "com.microsoft");
  REQUIRE(proto.graph().input_size() == 2);
  CHECK(proto.graph().input(0).name() == "com.microsoft::Gelu_5");
  CHECK(proto.graph().input(0).type().tensor_type().shape().dim(0).dim_param() == "input1_dim0");
  CHECK(proto.graph().input(0).type().tensor_type().shape().dim(1).dim_value() == 500);
  REQUIRE(proto.graph().output_size() == 2);
  CHECK(proto.graph().output(0).name() == "onnx::Gemm_6");

  // memopt's own loader reads it back, with the same shapes after inference.
  Expected<Model> back = LoadModelFromBytes(bytes);
  INFO(back.status().message());
  REQUIRE(back.ok());
  CHECK(back->graph.nodes.size() == 2);
  REQUIRE(InferShapes(back->graph).ok());
  const Value& stashed = back->graph.value(back->graph.FindValue("onnx::Gemm_6"));
  REQUIRE(stashed.info.shape);
  CHECK(ShapeToString(*stashed.info.shape) == "[input1_dim0, 500]");
}

TEST_CASE("dot: quoting", "[report][candidate]") {
  CHECK(DotQuote("a\"b\\c\nd") == "\"a\\\"b\\\\c\\nd\"");
}

}  // namespace
}  // namespace memopt
