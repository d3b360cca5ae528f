// ops_coverage of gradients on the GPU: where the CUDA backend claims a forward op, every node its
// gradient rule emits must run there too (a CUDA kernel, or a shape computation the executor runs
// on the host), or `grad` makes training graphs that `bench --device cuda` refuses. What a rule
// emits depends on the node (attributes, opset, shapes), so the check builds the backward pass of
// real graphs: the in-tree gradient cases and exports, and with the shared data the ONNX backend
// node tests and the forward transformers.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "cuda_kernel.h"
#include "grad/grad_builder.h"
#include "host_fallback.h"
#include "test_data.h"

namespace memopt {
namespace {

namespace fs = std::filesystem;

/// The .onnx files of `dir`: model.onnx of each subfolder and the .onnx files directly in it.
std::vector<std::string> ModelsIn(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.is_directory() && fs::exists(entry.path() / "model.onnx")) out.push_back((entry.path() / "model.onnx").string());
    if (entry.is_regular_file() && entry.path().extension() == ".onnx") out.push_back(entry.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

struct GradCoverage {
  int graphs = 0;  ///< graphs whose backward pass was built
  std::set<std::string> checked_ops;  ///< forward ops with a CUDA kernel whose gradient was seen
  std::map<std::string, std::string> problems;  ///< "fwd -> emitted" -> example node
};

void Check(const std::string& path, GradCoverage* cov) {
  auto model = LoadModel(path);
  if (!model.ok()) return;
  GradOptions options;
  options.trainable = ".*";  // inputs too: the node tests' operands are graph inputs
  auto built = BuildGradientGraph(*model, options);
  if (!built.ok()) return;  // ops without a rule, no float output, ...: nothing emitted to check
  ++cov->graphs;
  const cuda::CudaKernelRegistry& cuda = cuda::CudaKernelRegistry::Builtin();
  const Graph& g = built->model.graph;
  for (const Node& node : g.nodes) {
    auto it = built->emitted_for.find(node.name);
    if (it == built->emitted_for.end()) continue;
    const OpKey& forward = it->second;
    if (cuda.Find(forward.domain, forward.op) == nullptr) continue;
    cov->checked_ops.insert(forward.ToString());
    if (cuda.Find(node.domain, node.op_type) != nullptr || cuda::HostCapable(g, node)) continue;
    cov->problems.emplace(forward.ToString() + "'s gradient emits " + OpKey::Of(node).ToString(),
                          fs::path(path).parent_path().filename().string() + ": node '" + node.name + "'");
  }
}

void Report(const GradCoverage& cov) {
  UNSCOPED_INFO(cov.graphs << " backward passes built; forward ops on the GPU whose gradient was checked: "
                           << cov.checked_ops.size());
  for (const auto& [what, where] : cov.problems) {
    UNSCOPED_INFO(what << ", which has no CUDA kernel (" << where << ")");
  }
  CHECK(cov.problems.empty());
}

TEST_CASE("ops_coverage: gradients of GPU ops stay on the GPU (in-tree graphs)", "[ops][ops_coverage][cuda]") {
  GradCoverage cov;
  for (const char* dir : {"tests/data/grad_cases", "tests/data/grad_fixtures", "tests/data/torch_exports"}) {
    for (const std::string& path : ModelsIn(testing::SourcePath(dir))) Check(path, &cov);
  }
  CHECK(cov.graphs >= 20);
  Report(cov);
}

TEST_CASE("ops_coverage: gradients of GPU ops stay on the GPU (ONNX node tests, transformers)",
          "[ops][ops_coverage][cuda]") {
  auto node_tests = testing::SharedData("onnx_node_tests/node");
  if (!node_tests) return;
  auto forward = testing::SharedData("forward");
  if (!forward) return;
  GradCoverage cov;
  for (const std::string& path : ModelsIn(*node_tests)) Check(path, &cov);
  for (const std::string& path : ModelsIn(*forward)) Check(path, &cov);
  CHECK(cov.graphs >= 300);
  CHECK(cov.checked_ops.size() >= 20);
  Report(cov);
}

}  // namespace
}  // namespace memopt
