// The ONNX backend node tests of Dropout through the executor. Deterministic cases (inference
// mode, ratio 0, old opsets) must match the expected outputs; training-mode cases with ratio > 0
// draw numpy random numbers in the reference, so they must be flagged random by
// KernelInfo::is_random (the conformance runner then reports them as skipped) and are checked for
// mask consistency instead: y == x * mask / (1 - ratio).
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <map>

#include "exec/executor.h"
#include "exec/tensor_io.h"
#include "io/model_loader.h"
#include "test_data.h"

namespace memopt::testing {
namespace {

namespace fs = std::filesystem;

TEST_CASE("ONNX Dropout node tests: deterministic cases match, random ones are flagged", "[training][kernels]") {
  auto root = SharedData("onnx_node_tests/node");
  if (!root) return;
  int deterministic = 0, random = 0;
  for (const auto& entry : fs::directory_iterator(*root)) {
    const std::string name = entry.path().filename().string();
    if (name.find("dropout") == std::string::npos) continue;
    INFO("case " << name);
    auto model = LoadModel((entry.path() / "model.onnx").string());
    REQUIRE(model.ok());
    const Graph& g = model->graph;
    REQUIRE(g.nodes.size() == 1);
    std::map<std::string, Tensor> feeds;
    std::vector<const Tensor*> node_inputs;
    for (size_t i = 0; i < g.inputs.size(); ++i) {
      auto t = ReadTensorFile((entry.path() / "test_data_set_0" / ("input_" + std::to_string(i) + ".pb")).string());
      REQUIRE(t.ok());
      feeds[g.value(g.inputs[i]).name] = std::move(t).value();
    }
    const Node& node = g.nodes[0];
    for (ValueId v : node.inputs) node_inputs.push_back(v == kNone ? nullptr : &feeds.at(g.value(v).name));
    const KernelInfo* info = KernelRegistry::Cpu().Find("", "Dropout");
    REQUIRE(info != nullptr);
    REQUIRE(info->is_random != nullptr);
    KernelContext ctx;
    ctx.node = &node;
    ctx.inputs = node_inputs;
    const bool is_random = info->is_random(ctx);

    auto result = Execute(*model, feeds);
    INFO(result.status().message());
    REQUIRE(result.ok());
    std::vector<Tensor> expected;
    for (size_t o = 0; o < g.outputs.size(); ++o) {
      auto t = ReadTensorFile((entry.path() / "test_data_set_0" / ("output_" + std::to_string(o) + ".pb")).string());
      REQUIRE(t.ok());
      expected.push_back(std::move(t).value());
    }
    const Tensor& x = *node_inputs[0];
    const Tensor& y = result->outputs.at(g.value(g.outputs[0]).name);
    REQUIRE(y.shape() == expected[0].shape());
    if (!is_random) {
      ++deterministic;
      for (size_t o = 0; o < g.outputs.size(); ++o) {
        const Tensor& actual = result->outputs.at(g.value(g.outputs[o]).name);
        REQUIRE(actual.dtype() == expected[o].dtype());
        for (int64_t i = 0; i < actual.numel(); ++i) {
          const double e = expected[o].GetAsDouble(i), a = actual.GetAsDouble(i);
          REQUIRE(std::abs(a - e) <= 1e-7 + 1e-3 * std::abs(e));
        }
      }
      continue;
    }
    ++random;
    const double ratio = node_inputs[1]->GetAsDouble(0);
    for (int64_t i = 0; i < x.numel(); ++i) {
      const double a = y.GetAsDouble(i), kept = x.GetAsDouble(i) / (1 - ratio);
      bool ok = a == 0.0 || std::abs(a - kept) <= 1e-6 * std::abs(kept);
      if (g.outputs.size() > 1) {
        const Tensor& mask = result->outputs.at(g.value(g.outputs[1]).name);
        ok = mask.GetAsDouble(i) != 0 ? std::abs(a - kept) <= 1e-6 * std::abs(kept) : a == 0.0;
      }
      REQUIRE(ok);
    }
  }
  CHECK(deterministic == 8);
  CHECK(random == 4);
}

}  // namespace
}  // namespace memopt::testing
