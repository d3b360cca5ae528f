// Runs the ONNX backend node tests of the shape/layout/index ops (every case whose graph uses only
// ops registered by RegisterTensorKernels) through the executor and compares with the expected
// outputs (|actual - expected| <= 1e-7 + 1e-3 * |expected|, NaN == NaN). Prints the pass count per
// op; at least 95% of the cases must pass.
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "exec/executor.h"
#include "exec/tensor_io.h"
#include "helpers/cpu_kernels_of.h"
#include "io/model_loader.h"
#include "test_data.h"

namespace memopt::testing {
namespace {

namespace fs = std::filesystem;

// Empty string: the case passed; otherwise why not.
std::string CompareTensors(const Tensor& expected, const Tensor& actual) {
  if (expected.dtype() != actual.dtype()) return "dtype " + actual.Describe() + " vs " + expected.Describe();
  if (expected.shape() != actual.shape()) return "shape " + actual.Describe() + " vs " + expected.Describe();
  for (int64_t i = 0; i < expected.numel(); ++i) {
    if (expected.dtype() == DataType::kString) {
      if (expected.strings()[i] != actual.strings()[i]) return "string element " + std::to_string(i);
      continue;
    }
    const double e = expected.GetAsDouble(i), a = actual.GetAsDouble(i);
    if (std::isnan(e) && std::isnan(a)) continue;
    if (e == a) continue;
    if (!(std::fabs(a - e) <= 1e-7 + 1e-3 * std::fabs(e))) {
      std::ostringstream s;
      s << "element " << i << ": " << a << " vs expected " << e;
      return s.str();
    }
  }
  return "";
}

std::string RunCase(const fs::path& dir) {
  auto model = LoadModel((dir / "model.onnx").string());
  if (!model.ok()) return "load: " + model.status().message();
  const Graph& g = model->graph;
  std::map<std::string, Tensor> feeds;
  int i = 0;
  for (ValueId v : g.inputs) {
    if (g.value(v).initializer) continue;
    const fs::path f = dir / "test_data_set_0" / ("input_" + std::to_string(i++) + ".pb");
    if (!fs::exists(f)) break;
    auto t = ReadTensorFile(f.string());
    if (!t.ok()) return "input: " + t.status().message();
    feeds[g.value(v).name] = std::move(t).value();
  }
  auto result = Execute(*model, feeds);
  if (!result.ok()) return "run: " + result.status().message();
  for (size_t o = 0; o < g.outputs.size(); ++o) {
    auto expected = ReadTensorFile((dir / "test_data_set_0" / ("output_" + std::to_string(o) + ".pb")).string());
    if (!expected.ok()) return "expected: " + expected.status().message();
    const std::string& name = g.value(g.outputs[o]).name;
    auto it = result->outputs.find(name);
    if (it == result->outputs.end()) return "output '" + name + "' missing";
    std::string diff = CompareTensors(*expected, it->second);
    if (!diff.empty()) return "output '" + name + "': " + diff;
  }
  return "";
}

TEST_CASE("ONNX node tests of the tensor ops pass", "[tensor][kernels][conformance]") {
  auto root = SharedData("onnx_node_tests/node");
  if (!root) return;
  const KernelRegistry mine = CpuKernelsOf({"layout/layout_cpu", "layout/shape_cpu", "index", "generate/generate_cpu", "matmul/einsum_cpu"});
  std::set<std::string> ops;
  for (const std::string& name : mine.OpNames()) ops.insert(name);
  const KernelRegistry& cpu = KernelRegistry::Cpu();

  std::map<std::string, std::pair<int, int>> per_op;  // op -> (passed, total)
  std::vector<std::string> failures;
  int passed = 0, total = 0;
  std::vector<fs::path> dirs;
  for (const auto& e : fs::directory_iterator(*root)) dirs.push_back(e.path());
  std::sort(dirs.begin(), dirs.end());
  for (const fs::path& dir : dirs) {
    auto model = LoadModel((dir / "model.onnx").string());
    if (!model.ok()) continue;
    // A case of ours: a single node (or only nodes) of our ops, every input/output a tensor.
    std::string op;
    bool ours = !model->graph.nodes.empty();
    for (const Node& n : model->graph.nodes) {
      const std::string key = n.domain.empty() ? n.op_type : n.domain + "::" + n.op_type;
      ours = ours && ops.count(key) && cpu.Find(n.domain, n.op_type) != nullptr;
      if (op.empty()) op = key;
    }
    for (const Value& v : model->graph.values) ours = ours && v.info.is_tensor;
    if (!ours || model->graph.nodes.size() != 1) continue;
    std::string why = RunCase(dir);
    ++total;
    ++per_op[op].second;
    if (why.empty()) {
      ++passed;
      ++per_op[op].first;
    } else {
      failures.push_back(dir.filename().string() + ": " + why);
    }
  }
  std::ostringstream report;
  for (const auto& [op, pt] : per_op) report << op << " " << pt.first << "/" << pt.second << "\n";
  for (const std::string& f : failures) report << "FAIL " << f << "\n";
  report << passed << " passed, " << (total - passed) << " failed";
  INFO(report.str());
  WARN(report.str());
  REQUIRE(total > 0);
  CHECK(passed * 100 >= total * 95);
}

}  // namespace
}  // namespace memopt::testing
