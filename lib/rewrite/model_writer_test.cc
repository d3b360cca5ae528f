#include "rewrite/model_writer.h"

#include <onnx/checker.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "exec/executor.h"
#include "helpers/plan_test_util.h"
#include "test_data.h"

namespace memopt {
namespace {

namespace fs = std::filesystem;

/// A fresh scratch folder under the system temp folder.
fs::path ScratchDir(const std::string& name) {
  fs::path dir = fs::temp_directory_path() / ("memopt_writer_test_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string ReadAll(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> Serialized(const Graph& g) {
  std::vector<std::string> nodes;
  for (const Node& n : g.nodes) nodes.push_back(g.ToProto(n).SerializeAsString());
  return nodes;
}

onnx::ModelProto ParseProto(const fs::path& path) {
  onnx::ModelProto proto;
  REQUIRE(proto.ParseFromString(ReadAll(path)));
  return proto;
}

TEST_CASE("writer: every field but the node list is kept byte for byte", "[rewrite][writer]") {
  auto path = testing::SharedData("ort_recompute/recompute_gelu.onnx");
  if (!path) return;
  testing::Scanned s = testing::ScanFile(*path, 1);
  PlanOutcome o = testing::Outcome(s, testing::Select(s, R"(["Gelu+:1:-1"])"));
  fs::path dir = ScratchDir("gelu");
  fs::path out = dir / "gelu_remat.onnx";
  Expected<WriteModelReport> report = WriteModelWithNodes(s.model, Serialized(o.rewritten.graph), out.string());
  INFO(report.status().message());
  REQUIRE(report.ok());
  CHECK(report->external_data_file.empty());
  CHECK(report->model_bytes == fs::file_size(out));

  onnx::ModelProto before = ParseProto(*path);
  onnx::ModelProto after = ParseProto(out);
  REQUIRE(after.graph().node_size() == before.graph().node_size() + 1);
  onnx::ModelProto a = before, b = after;
  a.mutable_graph()->clear_node();
  b.mutable_graph()->clear_node();
  CHECK(a.SerializeAsString() == b.SerializeAsString());
  for (int i = 0; i < after.graph().node_size(); ++i) {
    CHECK(after.graph().node(i).SerializeAsString() ==
          o.rewritten.graph.ToProto(o.rewritten.graph.nodes[i]).SerializeAsString());
  }
  // The ONNX checker accepts it wherever it accepts the input (com.microsoft ops are unknown to it).
  bool input_ok = true;
  try {
    onnx::checker::check_model(before);
  } catch (const std::exception&) {
    input_ok = false;
  }
  if (input_ok) CHECK_NOTHROW(onnx::checker::check_model(after));

  // Reloads with the same analysis.
  Expected<Model> reloaded = LoadModel(out.string());
  REQUIRE(reloaded.ok());
  CHECK(reloaded->graph.nodes.size() == o.rewritten.graph.nodes.size());
  fs::remove_all(dir);
}

TEST_CASE("writer: -o naming the input model is refused", "[rewrite][writer]") {
  fs::path dir = ScratchDir("same");
  fs::copy(testing::SourcePath("tests/data/tiny_external/model.onnx"), dir / "model.onnx");
  fs::copy(testing::SourcePath("tests/data/tiny_external/weights.bin"), dir / "weights.bin");
  Expected<Model> m = LoadModel((dir / "model.onnx").string());
  REQUIRE(m.ok());
  Expected<WriteModelReport> r = WriteModelWithNodes(*m, Serialized(m->graph), (dir / "model.onnx").string());
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == ErrorCode::kUsage);
  CHECK(r.status().message().find("is the input model") != std::string::npos);
  Expected<WriteModelReport> missing = WriteModelWithNodes(*m, Serialized(m->graph), (dir / "no/x.onnx").string());
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().message().find("does not exist") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("writer: external data is referenced in place and copied to another folder", "[rewrite][writer]") {
  fs::path dir = ScratchDir("external");
  fs::create_directories(dir / "in");
  fs::create_directories(dir / "elsewhere");
  fs::copy(testing::SourcePath("tests/data/tiny_external/model.onnx"), dir / "in/model.onnx");
  fs::copy(testing::SourcePath("tests/data/tiny_external/weights.bin"), dir / "in/weights.bin");
  Expected<Model> m = LoadModel((dir / "in/model.onnx").string());
  REQUIRE(m.ok());

  Expected<WriteModelReport> same = WriteModelWithNodes(*m, Serialized(m->graph), (dir / "in/out.onnx").string());
  REQUIRE(same.ok());
  CHECK(same->copied_external_files.empty());
  CHECK(ReadAll(dir / "in/out.onnx") == ReadAll(dir / "in/model.onnx"));

  Expected<WriteModelReport> other =
      WriteModelWithNodes(*m, Serialized(m->graph), (dir / "elsewhere/out.onnx").string());
  REQUIRE(other.ok());
  CHECK(other->copied_external_files == std::vector<std::string>{"weights.bin"});
  CHECK(ReadAll(dir / "elsewhere/weights.bin") == ReadAll(dir / "in/weights.bin"));
  Expected<Model> back = LoadModel((dir / "elsewhere/out.onnx").string());
  INFO(back.status().message());
  CHECK(back.ok());
  fs::remove_all(dir);
}

TEST_CASE("writer: large models move their initializers to external data", "[rewrite][writer]") {
  // A model with inline raw_data initializers (the ORT training graphs feed their weights as inputs).
  const std::string path = testing::SourcePath("tests/data/grad_fixtures/mlp_logits/model.onnx");
  Expected<Model> m = LoadModel(path);
  REQUIRE(m.ok());
  onnx::ModelProto before = ParseProto(path);
  int64_t big = 0;
  for (const auto& t : before.graph().initializer()) big += t.raw_data().size() >= 16;
  REQUIRE(big > 0);

  fs::path dir = ScratchDir("large");
  WriteModelOptions options;
  options.max_inline_model_bytes = 100;  // pretend the output would pass 2 GB
  options.external_min_tensor_bytes = 16;
  fs::path out = dir / "model_out.onnx";
  Expected<WriteModelReport> r = WriteModelWithNodes(*m, Serialized(m->graph), out.string(), options);
  INFO(r.status().message());
  REQUIRE(r.ok());
  CHECK(r->external_data_file == "model_out.onnx.data");
  CHECK(r->externalized_tensors == big);
  CHECK(fs::exists(dir / "model_out.onnx.data"));

  Expected<Model> back = LoadModel(out.string());
  INFO(back.status().message());
  REQUIRE(back.ok());
  // Every initializer reads back to the same bytes.
  for (const Value& v : m->graph.values) {
    if (!v.initializer) continue;
    ValueId w = back->graph.FindValue(v.name);
    REQUIRE(w != kNone);
    Expected<Tensor> t0 = ReadInitializer(*m, m->graph.FindValue(v.name));
    Expected<Tensor> t1 = ReadInitializer(*back, w);
    REQUIRE(t0.ok());
    REQUIRE(t1.ok());
    REQUIRE(t0->bytes() == t1->bytes());
    CHECK(std::memcmp(t0->raw(), t1->raw(), static_cast<size_t>(t0->bytes())) == 0);
  }
  fs::remove_all(dir);
}

TEST_CASE("writer: models loaded from bytes are written from those bytes", "[rewrite][writer]") {
  Model m = testing::NamedTextModel(R"(
    <ir_version: 8, opset_import: ["" : 15]>
    g (float[4] x) => (float[4] y) {
      y = Neg(x)
    })",
                                    {"neg"});
  fs::path dir = ScratchDir("bytes");
  Expected<WriteModelReport> r = WriteModelWithNodes(m, Serialized(m.graph), (dir / "m.onnx").string());
  INFO(r.status().message());
  REQUIRE(r.ok());
  onnx::ModelProto p = ParseProto(dir / "m.onnx");
  REQUIRE(p.graph().node_size() == 1);
  CHECK(p.graph().node(0).name() == "neg");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace memopt
