#include "grad/training_model_writer.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <catch2/catch.hpp>

#include "grad/grad_check_util.h"
#include "test_data.h"

namespace memopt {
namespace {

namespace fs = std::filesystem;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

/// A fresh scratch folder under the system temp folder.
fs::path Scratch(const std::string& name) {
  fs::path p = fs::temp_directory_path() / ("memopt_grad_writer_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(p);
  fs::create_directories(p);
  return p;
}

/// Bytes of every initializer's TensorProto message, by name.
std::map<std::string, std::string> InitializerBytes(const Model& m, const std::string& file) {
  std::map<std::string, std::string> out;
  for (const Value& v : m.graph.values) {
    if (v.initializer) out[v.name] = file.substr(v.initializer->file_offset, v.initializer->file_length);
  }
  return out;
}

constexpr const char* kModel = R"(<ir_version: 8, opset_import: ["" : 17]>
  g (float[4, 3] x) => (float y, float[4, 5] h)
  <float[3, 5] w = {1,2,3,4,5,6,7,8,9,10,11,12,13,14,15}, float[5] b = {0.5, 1, 1.5, 2, 2.5}> {
    m = MatMul(x, w)
    h = Add(m, b)
    g = com.microsoft.Gelu(h)
    y = ReduceMean <keepdims = 0> (g)
  })";

TEST_CASE("grad writer: output reloads with the same initializer bytes", "[grad]") {
  const fs::path dir = Scratch("roundtrip");
  auto text_model = LoadModelFromText(kModel);
  REQUIRE(text_model.ok());
  // Through a file, as the CLI does.
  const std::string in_path = (dir / "fwd.onnx").string();
  { std::ofstream(in_path, std::ios::binary) << *text_model->source_bytes; }
  auto fwd = LoadModel(in_path);
  REQUIRE(fwd.ok());
  auto result = BuildGradientGraph(*fwd);
  INFO(result.status().message());
  REQUIRE(result.ok());
  const std::string out_path = (dir / "train.onnx").string();
  auto written = WriteTrainingModel(*result, out_path);
  INFO(written.status().message());
  REQUIRE(written.ok());
  CHECK(written->model_bytes == fs::file_size(out_path));

  auto back = LoadModel(out_path);
  INFO(back.status().message());
  REQUIRE(back.ok());
  const Graph& g = back->graph;
  CHECK(g.nodes.size() == result->model.graph.nodes.size());
  std::vector<std::string> outputs;
  for (ValueId v : g.outputs) outputs.push_back(g.value(v).name);
  CHECK(outputs == std::vector<std::string>{"y", "w_grad", "b_grad"});
  CHECK(g.OpsetVersion("com.microsoft") == 1);
  CHECK(g.OpsetVersion("") == 17);
  CHECK(InitializerBytes(*back, ReadFile(out_path)) == InitializerBytes(*fwd, ReadFile(in_path)));
  // The incoming gradient and the gradient outputs are declared with types and shapes.
  const Value& seed = g.value(g.FindValue("y_grad"));
  CHECK(seed.info.dtype == DataType::kFloat);
  REQUIRE(seed.info.shape.has_value());
  CHECK(seed.info.shape->empty());
  const Value& wg = g.value(g.FindValue("w_grad"));
  CHECK(wg.info.dtype == DataType::kFloat);
  REQUIRE(wg.info.shape.has_value());
  CHECK(ShapeToString(*wg.info.shape) == "[3, 5]");
  // The reloaded training graph runs and gives the in-memory result.
  std::map<std::string, Tensor> feeds;
  Tensor x(DataType::kFloat, {4, 3});
  for (int i = 0; i < 12; ++i) x.data<float>()[i] = 0.1f * static_cast<float>(i - 5);
  feeds["x"] = x;
  auto a = Execute(result->model, feeds, testing::InOrder(result->model));
  auto b = Execute(*back, feeds, testing::InOrder(*back));
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  for (const char* name : {"y", "w_grad", "b_grad"}) {
    const Tensor& ta = a->outputs.at(name);
    const Tensor& tb = b->outputs.at(name);
    REQUIRE(ta.numel() == tb.numel());
    for (int64_t i = 0; i < ta.numel(); ++i) CHECK(ta.GetAsDouble(i) == tb.GetAsDouble(i));
  }

  // -o naming the input is refused.
  auto same = WriteTrainingModel(*result, in_path);
  CHECK(same.status().code() == ErrorCode::kUsage);
  fs::remove_all(dir);
}

TEST_CASE("grad writer: real forward models", "[grad][data]") {
  auto path = testing::SharedData("forward/gpt2_megatron.onnx");
  if (!path) return;
  const fs::path dir = Scratch("gpt2");
  auto fwd = LoadModel(*path);
  REQUIRE(fwd.ok());
  auto result = BuildGradientGraph(*fwd);
  REQUIRE(result.ok());
  const std::string out = (dir / "train.onnx").string();
  auto written = WriteTrainingModel(*result, out);
  INFO(written.status().message());
  REQUIRE(written.ok());
  auto back = LoadModel(out);
  INFO(back.status().message());
  REQUIRE(back.ok());
  CHECK(InitializerBytes(*back, ReadFile(out)) == InitializerBytes(*fwd, ReadFile(*path)));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace memopt
