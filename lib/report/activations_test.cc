#include "report/activations.h"

#include <set>

#include <catch2/catch.hpp>

#include "helpers/analysis_test_util.h"
#include "grad/grad_builder.h"
#include "test_data.h"

namespace memopt {
namespace {

// mul and relu are forward (--boundary relu); `a` and `y` are read by the backward nodes.
constexpr const char* kGraph = R"(
    <ir_version: 8, opset_import: ["" : 15]>
    g (float[N, 4] x, float[4] w) => (float[N, 4] y, float[N, 4] w_grad) {
      a = Mul(x, w)
      y = Relu(a)
      d = Sigmoid(y)
      w_grad = Mul(d, a)
    })";

TEST_CASE("activations: rows, live ranges and decisions", "[report][activations]") {
  Model m = testing::TextModel(kGraph, {"mul", "relu", "sigmoid", "mul_grad"});
  ScanOptions scan_options;
  scan_options.boundary_node = "relu";
  scan_options.dims.Set("N", 10);
  ScanResult scan = Scan(m.graph, scan_options).value();

  ActivationOptions options;
  options.dims = scan_options.dims;
  ActivationTable none = BuildActivationTable(m.graph, scan, options);  // no plan: everything SAVE
  REQUIRE(none.rows.size() == 2);
  CHECK(none.tensors == 2);
  CHECK(none.layers == 0);
  const ActivationRow& a = none.rows[0];
  CHECK(m.graph.value(a.values[0]).name == "a");
  CHECK((a.forward_position == 0 && a.last_use_position == 3));
  CHECK(none.rows[1].forward_position == 1);
  CHECK(none.rows[1].last_use_position == 2);
  CHECK_FALSE(a.recompute);
  CHECK(a.segment.empty());
  CHECK(none.total_bytes.EvaluateInt(options.dims).value() == 320);
  CHECK(none.recompute_tensors == 0);

  // A plan that frees `a` (whatever the scan found, mark the plan of the `mul` entry).
  for (size_t i = 0; i < scan.plans.size(); ++i) {
    if (m.graph.node(scan.plans[i].entry).name == "mul") options.plans.push_back(i);
  }
  if (options.plans.empty()) return;  // Mul not recomputable in this op table
  ActivationTable with = BuildActivationTable(m.graph, scan, options);
  CHECK(with.rows[0].recompute);
  CHECK(with.rows[0].config == "Mul+:1:-1");
  CHECK(with.recompute_tensors == 1);
  CHECK(with.recompute_bytes.EvaluateInt(options.dims).value() == 160);
  const std::string text = RenderActivationsText("tiny", m.graph, with, options, OutputFormat::kTable);
  CHECK(text.find("RECOMPUTE") != std::string::npos);
  CHECK(text.find("1-4") != std::string::npos);  // a: step 1 to step 4 (1-based)
  nlohmann::json j = ActivationsToJson("tiny", m.graph, with, options);
  CHECK(j["activations"][0]["decision"] == "RECOMPUTE");
  CHECK(j["activations"][0]["bytes"] == 160);
  CHECK(j["activations"][0]["shape_at_dims"] == "[10, 4]");
  CHECK(j["activations"][1]["decision"] == "SAVE");
}

TEST_CASE("activations: identical BLOOM layers are folded", "[report][activations][data]") {
  auto path = testing::SharedData("ort_recompute/3layer_bloom_optimized_training.onnx");
  if (!path) return;
  Model m = testing::LoadShaped(*path);
  ScanResult scan = Scan(m.graph, ScanOptions{}).value();
  ActivationOptions options;
  options.plans = TablePlans(scan);
  ActivationTable folded = BuildActivationTable(m.graph, scan, options);
  options.fold = false;
  ActivationTable flat = BuildActivationTable(m.graph, scan, options);
  CHECK(folded.layers == 3);
  CHECK(flat.rows.size() == static_cast<size_t>(flat.tensors));
  CHECK(folded.tensors == flat.tensors);
  CHECK(folded.rows.size() < flat.rows.size());
  // Every tensor appears exactly once across the folded rows.
  std::set<ValueId> seen;
  size_t covered = 0;
  bool any_fold = false;
  for (const ActivationRow& r : folded.rows) {
    covered += r.values.size();
    seen.insert(r.values.begin(), r.values.end());
    any_fold = any_fold || r.values.size() > 1;
    if (r.values.size() > 1) CHECK(r.segment.rfind("layers ", 0) == 0);
  }
  CHECK(any_fold);
  CHECK(covered == static_cast<size_t>(flat.tensors));
  CHECK(seen.size() == covered);
  // The decisions follow the table plans: as many RECOMPUTE tensors as the plans free.
  CHECK(folded.recompute_tensors == flat.recompute_tensors);
  CHECK(folded.recompute_tensors > 0);
}

}  // namespace
}  // namespace memopt

namespace memopt {
namespace {

// A dynamo export keeps the PyTorch module of each node (the function it was inlined from): the
// table gets a module column and the JSON rows a "module" field.
TEST_CASE("activations: PyTorch module names of a dynamo export", "[report][activations][torch_exports]") {
  const std::string path = testing::SourcePath("tests/data/torch_exports/llama_dynamo/model.onnx");
  auto forward = LoadModel(path);
  REQUIRE(forward.ok());
  auto training = BuildGradientGraph(*forward);
  REQUIRE(training.ok());
  const Graph& g = training->model.graph;
  ScanResult scan = Scan(g, ScanOptions{}).value();
  ActivationOptions options;
  ActivationTable table = BuildActivationTable(g, scan, options);
  REQUIRE(!table.rows.empty());
  const std::string text = RenderActivationsText("llama", g, table, options, OutputFormat::kTable);
  CHECK(text.find("module") != std::string::npos);
  CHECK(text.find("(LlamaSdpaAttention)") != std::string::npos);
  nlohmann::json j = ActivationsToJson("llama", g, table, options);
  int with_module = 0;
  for (const auto& row : j["activations"]) with_module += row.contains("module") ? 1 : 0;
  CHECK(with_module > static_cast<int>(j["activations"].size()) / 2);
}

}  // namespace
}  // namespace memopt
