// Runs inference (without the declared shapes) on every model of the ONNX backend node test
// suite in ../shared/data/onnx_node_tests and compares each graph output the rules resolve with
// the shape the test declares. Outputs left unresolved (shape tensors fed as graph inputs, ops
// without a rule) are counted, not compared.
#include <algorithm>
#include <filesystem>
#include <fstream>

#include "helpers/shape_test_util.h"
#include "test_data.h"

namespace memopt {
namespace {

bool Resolved(const TensorInfo& info) {
  if (!info.shape.has_value()) return false;
  for (const SymExpr& d : *info.shape) {
    for (const std::string& s : d.Symbols()) {
      if (s.rfind("unk__", 0) == 0 || s.rfind("nonzero__", 0) == 0) return false;  // made up by inference
    }
  }
  return true;
}

/// Loads a node-test model; models newer than the loader's IR range are re-read from the proto.
Expected<Model> LoadNodeTest(const std::filesystem::path& path) {
  auto model = LoadModel(path.string());
  if (model.ok()) return model;
  onnx::ModelProto proto;
  std::ifstream in(path, std::ios::binary);
  if (!proto.ParseFromIstream(&in)) return model.status();
  proto.set_ir_version(10);
  for (auto& opset : *proto.mutable_opset_import()) {
    if (opset.domain().empty() && opset.version() > 23) opset.set_version(23);
  }
  return ModelFromProto(proto, path.parent_path().string());
}

TEST_CASE("ONNX node tests: resolved output shapes match the declared ones", "[shape]") {
  auto root = testing::SharedData("onnx_node_tests/node");
  if (!root.has_value()) return;
  std::vector<std::filesystem::path> dirs;
  for (const auto& entry : std::filesystem::directory_iterator(*root)) dirs.push_back(entry.path());
  std::sort(dirs.begin(), dirs.end());
  int compared = 0;
  int models = 0;
  for (const auto& dir : dirs) {
    auto model = LoadNodeTest(dir / "model.onnx");
    if (!model.ok()) continue;
    ++models;
    Graph& g = model->graph;
    std::vector<TensorInfo> declared;
    for (const Value& v : g.values) declared.push_back(v.info);
    ShapeInferenceOptions options;
    options.use_declared_shapes = false;
    auto stats = InferShapes(g, options);
    INFO(dir.filename().string() << ": " << stats.status().message());
    REQUIRE(stats.ok());
    if (!stats->ops_without_rule.empty()) continue;
    for (ValueId o : g.outputs) {
      const TensorInfo& inf = g.value(o).info;
      const TensorInfo& dec = declared[o];
      if (!dec.shape.has_value() || !inf.is_tensor || !Resolved(inf) || dec.dtype == DataType::kUndefined) continue;
      ++compared;
      INFO(dir.filename().string() << " output '" << g.value(o).name << "': inferred " << DataTypeName(inf.dtype)
                                   << ShapeToString(*inf.shape) << ", declared " << DataTypeName(dec.dtype)
                                   << ShapeToString(*dec.shape));
      CHECK(inf.dtype == dec.dtype);
      CHECK(*inf.shape == *dec.shape);
    }
  }
  CHECK(models > 1700);
  CHECK(compared > 1500);
}

}  // namespace
}  // namespace memopt
