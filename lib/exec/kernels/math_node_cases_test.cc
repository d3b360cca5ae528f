// Runs the ONNX backend node tests (shared data) whose single node is one of the math kernels
// (matmul/gemm/conv/pool/norm/softmax/loss) and checks the pass rate per op, with the
// conformance tolerance |actual - expected| <= 1e-7 + 1e-3 * |expected| (NaN == NaN).
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <sstream>

#include "exec/executor.h"
#include "helpers/math_test_util.h"
#include "exec/tensor_io.h"
#include "io/model_loader.h"
#include "test_data.h"

namespace memopt {
namespace {

/// Empty string when equal, else the first mismatch.
std::string Compare(const Tensor& actual, const Tensor& expected) {
  if (actual.dtype() != expected.dtype()) {
    return "dtype " + DataTypeName(actual.dtype()) + " vs expected " + DataTypeName(expected.dtype());
  }
  if (actual.shape() != expected.shape()) {
    return "shape " + ShapeToString(actual.shape()) + " vs expected " + ShapeToString(expected.shape());
  }
  for (int64_t i = 0; i < actual.numel(); ++i) {
    const double a = actual.GetAsDouble(i), e = expected.GetAsDouble(i);
    if (std::isnan(a) && std::isnan(e)) continue;
    if (std::isinf(e) && a == e) continue;
    if (!(std::abs(a - e) <= 1e-7 + 1e-3 * std::abs(e))) {
      std::ostringstream os;
      os << "element " << i << ": " << a << " vs expected " << e;
      return os.str();
    }
  }
  return "";
}

enum class Outcome { kPass, kFail, kSkip };

Outcome RunCase(const std::filesystem::path& dir, const KernelRegistry& registry, std::string* op, std::string* why) {
  auto model = LoadModel((dir / "model.onnx").string());
  if (!model.ok()) return Outcome::kSkip;
  const Graph& g = model->graph;
  if (g.nodes.size() != 1) return Outcome::kSkip;
  const Node& node = g.nodes[0];
  const KernelInfo* info = registry.Find(node.domain, node.op_type);
  if (info == nullptr) return Outcome::kSkip;
  *op = node.op_type;
  const std::filesystem::path data = dir / "test_data_set_0";
  std::map<std::string, Tensor> feeds;
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    auto t = ReadTensorFile((data / ("input_" + std::to_string(i) + ".pb")).string());
    if (!t.ok()) return Outcome::kSkip;
    feeds[g.value(g.inputs[i]).name] = std::move(t).value();
  }
  if (!node.inputs.empty() && node.inputs[0] != kNone) {
    const auto it = feeds.find(g.value(node.inputs[0]).name);
    if (it != feeds.end() && !info->types.empty() &&
        std::find(info->types.begin(), info->types.end(), it->second.dtype()) == info->types.end()) {
      return Outcome::kSkip;
    }
  }
  RunOptions options;
  options.registry = &registry;
  auto result = Execute(*model, feeds, options);
  if (!result.ok()) {
    *why = result.status().message();
    return Outcome::kFail;
  }
  for (size_t i = 0; i < g.outputs.size(); ++i) {
    auto expected = ReadTensorFile((data / ("output_" + std::to_string(i) + ".pb")).string());
    if (!expected.ok()) return Outcome::kSkip;
    const std::string& name = g.value(g.outputs[i]).name;
    auto it = result->outputs.find(name);
    if (it == result->outputs.end()) {
      *why = "output '" + name + "' missing";
      return Outcome::kFail;
    }
    const std::string diff = Compare(it->second, *expected);
    if (!diff.empty()) {
      *why = "output '" + name + "': " + diff;
      return Outcome::kFail;
    }
  }
  return Outcome::kPass;
}

TEST_CASE("math kernels pass the ONNX node tests of their ops", "[exec][kernels][math]") {
  auto root = testing::SharedData("onnx_node_tests/node");
  if (!root) return;
  const KernelRegistry& registry = math::testing::MathRegistry();
  std::map<std::string, std::pair<int, int>> per_op;  // op -> (passed, failed)
  std::vector<std::string> failures;
  std::vector<std::filesystem::path> dirs;
  for (const auto& entry : std::filesystem::directory_iterator(*root)) {
    if (entry.is_directory()) dirs.push_back(entry.path());
  }
  std::sort(dirs.begin(), dirs.end());
  int passed = 0, failed = 0;
  for (const auto& dir : dirs) {
    std::string op, why;
    const Outcome o = RunCase(dir, registry, &op, &why);
    if (o == Outcome::kSkip) continue;
    if (o == Outcome::kPass) {
      ++passed;
      ++per_op[op].first;
    } else {
      ++failed;
      ++per_op[op].second;
      failures.push_back(dir.filename().string() + ": " + why);
    }
  }
  std::ostringstream summary;
  for (const auto& [op, counts] : per_op) {
    summary << op << " " << counts.first << "/" << (counts.first + counts.second) << "\n";
  }
  for (const auto& f : failures) summary << "FAILED " << f << "\n";
  INFO(summary.str());
  CHECK(passed > 0);
  // Every case of these ops is expected to pass; keep the 95% floor of the conformance gate.
  CHECK(passed >= 0.95 * (passed + failed));
  CHECK(failures.empty());
}

}  // namespace
}  // namespace memopt
