// `memopt grad` + the CPU executor against PyTorch autograd, on the fixtures that
// scripts/export_torch_fixtures.py wrote to tests/data/grad_fixtures (models exported with
// torch.onnx.export, inputs, and torch's parameter gradients). No Python is needed here.
//
// With a scalar loss the executor's YieldOp seeds the backward with d loss = 1, as
// `loss.backward()` does (exec/output_gradients.h), so the gradient outputs are compared with
// autograd's as they are. The MLP fixture has no loss; its expected gradients are those of torch's
// backward with grad_output = the output, so the test feeds the output it computed as the
// incoming gradient (<output>_grad).
#include <cmath>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "analysis/scan.h"
#include "exec/tensor_io.h"
#include "grad/grad_check_util.h"
#include "test_data.h"

namespace memopt {
namespace {

namespace fs = std::filesystem;

struct Fixture {
  std::string name;
  fs::path dir;
  nlohmann::json manifest;
};

/// The fixtures under tests/data/<folder>, by name.
std::vector<Fixture> Fixtures(const std::string& folder = "grad_fixtures") {
  std::vector<Fixture> out;
  const fs::path root = testing::SourcePath("tests/data/" + folder);
  if (!fs::is_directory(root)) return out;
  for (const auto& entry : fs::directory_iterator(root)) {
    const fs::path manifest = entry.path() / "manifest.json";
    if (!fs::exists(manifest)) continue;
    std::ifstream in(manifest);
    out.push_back({entry.path().filename().string(), entry.path(), nlohmann::json::parse(in)});
  }
  std::sort(out.begin(), out.end(), [](const Fixture& a, const Fixture& b) { return a.name < b.name; });
  return out;
}

double MaxAbs(const Tensor& t) {
  double m = 0;
  for (int64_t i = 0; i < t.numel(); ++i) m = std::max(m, std::abs(t.GetAsDouble(i)));
  return m;
}

/// max |got - want| / max(max |want|, floor). The floor (1% of the largest gradient of
/// the model) keeps gradients that vanish mathematically, whose float32 values are rounding noise
/// in both frameworks (e.g. a conv bias followed by batch normalization), from dividing by ~0.
double RelativeError(const Tensor& got, const Tensor& want, double floor) {
  double diff = 0;
  for (int64_t i = 0; i < want.numel(); ++i) {
    diff = std::max(diff, std::abs(got.GetAsDouble(i) - want.GetAsDouble(i)));
  }
  return diff / std::max(MaxAbs(want), floor);
}

/// grad + the CPU executor against the fixture's autograd gradients (rel 1e-4); returns grad's
/// result for further checks.
GradResult CheckAgainstAutograd(const Fixture& f) {
  {
    INFO("fixture " << f.name);
    auto model = LoadModel((f.dir / "model.onnx").string());
    INFO(model.status().message());
    REQUIRE(model.ok());
    auto result = BuildGradientGraph(*model);
    INFO(result.status().message());
    REQUIRE(result.ok());
    // Buffers (batch norm running statistics in eval mode) may be unused; parameters may not.
    for (const std::string& unused : result->unused_trainable) {
      INFO("unused trainable tensor " << unused);
      for (const auto& param : f.manifest["gradients"]) CHECK(param.get<std::string>() != unused);
    }
    const bool has_loss = !f.manifest["loss"].is_null();
    CHECK(result->loss == (has_loss ? f.manifest["loss"].get<std::string>() : std::string()));

    auto feeds = ReadInputDir((f.dir / "inputs").string(), result->model.graph);
    INFO(feeds.status().message());
    REQUIRE(feeds.ok());
    RunOptions options = testing::InOrder(result->model);
    auto run = Execute(result->model, *feeds, options);
    INFO(run.status().message());
    REQUIRE(run.ok());
    if (has_loss) {
      const double loss = run->outputs.at(result->loss).GetAsDouble(0);
      const double torch_loss = f.manifest["loss_value"].get<double>();
      CHECK(std::abs(loss - torch_loss) <= 1e-5 * std::abs(torch_loss));
    } else {
      // torch's grad_output was the output itself: feed it (from a forward run) as the incoming
      // gradient.
      auto forward = Execute(*model, *ReadInputDir((f.dir / "inputs").string(), model->graph));
      REQUIRE(forward.ok());
      const std::map<std::string, std::string> names = YieldGradientNames(result->model.graph);
      for (const std::string& output : result->seeded_outputs) {
        REQUIRE(names.count(output + "_grad") == 1);
        options.output_grads.given[names.at(output + "_grad")] = forward->outputs.at(output);
      }
      run = Execute(result->model, *feeds, options);
      REQUIRE(run.ok());
    }
    std::set<std::string> built(result->gradients.begin(), result->gradients.end());
    std::map<std::string, Tensor> expected;
    double largest = 0;
    for (const auto& param : f.manifest["gradients"]) {
      const std::string name = param.get<std::string>();
      auto want = ReadTensorFile((f.dir / "expected" / (name + "_grad.pb")).string());
      REQUIRE(want.ok());
      largest = std::max(largest, MaxAbs(*want));
      expected[name] = *want;
    }
    for (const auto& [name, want] : expected) {
      INFO("parameter " << name);
      REQUIRE(built.count(name) == 1);
      const Tensor& got = run->outputs.at(name + "_grad");
      REQUIRE(got.shape() == want.shape());
      const double err = RelativeError(got, want, 0.01 * largest);
      INFO("relative error " << err);
      CHECK(err < 1e-4);
    }
    return std::move(result).value();
  }
}

TEST_CASE("grad fixtures: gradients match PyTorch autograd", "[grad][fixtures]") {
  const std::vector<Fixture> fixtures = Fixtures();
  REQUIRE(fixtures.size() >= 4);
  for (const Fixture& f : fixtures) CheckAgainstAutograd(f);
}

// Hugging Face transformers models exported by both PyTorch exporters
// (scripts/export_torch_exports.py): TorchScript with symbolic dims, and dynamo's model-local
// functions, which the loader inlines.
TEST_CASE("torch exports: gradients match PyTorch autograd", "[grad][fixtures][torch_exports]") {
  const std::vector<Fixture> fixtures = Fixtures("torch_exports");
  REQUIRE(fixtures.size() >= 12);
  std::set<std::string> exporters;
  for (const Fixture& f : fixtures) {
    CheckAgainstAutograd(f);
    exporters.insert(f.manifest["exporter"].get<std::string>());
    if (f.manifest["exporter"] == "dynamo") {
      auto model = LoadModel((f.dir / "model.onnx").string());
      REQUIRE(model.ok());
      // The model is one call; the functions of its modules get inlined (torch_lib's helpers Rank
      // and IsScalar are in the file without a caller).
      CHECK(model->inlined_calls >= 1);
      CHECK(model->inlined_functions.size() + 2 >= f.manifest["local_functions"].get<size_t>());
      CHECK(model->graph.nodes.size() > 100);
    }
  }
  CHECK(exporters == std::set<std::string>{"dynamo", "ts"});
}

// Models exported by the current PyTorch's torch.onnx.export (scripts/export_torch_current.py), its
// optimizer on (the default) or off: every parameter's gradient under its PyTorch name, folded
// transposes and merged initializers restored, BatchNorm trained as PyTorch ran it
// (grad/torch_parameters.h).
TEST_CASE("current PyTorch exports: gradients by PyTorch name match autograd", "[grad][fixtures][torch_current]") {
  const std::vector<Fixture> fixtures = Fixtures("torch_current");
  if (fixtures.empty()) {
    WARN("tests/data/torch_current is absent");
    return;
  }
  REQUIRE(fixtures.size() >= 9);
  int restored = 0;
  for (const Fixture& f : fixtures) {
    const GradResult built = CheckAgainstAutograd(f);
    const GradResult* result = &built;
    INFO("fixture " << f.name);
    CHECK(result->torch_parameters.has_signature);
    // Only aliases may be left (BERT's cls.predictions.bias is decoder.bias, which PyTorch trains).
    for (const std::string& left : result->torch_parameters.unrecoverable) {
      INFO("parameter without a gradient " << left);
      for (const auto& param : f.manifest["gradients"]) CHECK(param.get<std::string>() != left);
    }
    // Exactly PyTorch's parameters are trained: no buffer, no exporter constant.
    CHECK(result->gradients.size() == f.manifest["gradients"].size());
    restored += result->torch_parameters.restored_transposes + result->torch_parameters.training_batch_norms +
                result->torch_parameters.recurrent_parameters;
  }
  CHECK(restored > 0);
}

TEST_CASE("grad fixtures: scan sees ORT's layers and recompute clusters", "[grad][fixtures]") {
  for (const Fixture& f : Fixtures()) {
    if (f.name != "gpt2_tiny" && f.name != "bert_tiny") continue;
    INFO("fixture " << f.name);
    auto model = LoadModel((f.dir / "model.onnx").string());
    REQUIRE(model.ok());
    auto result = BuildGradientGraph(*model);
    REQUIRE(result.ok());
    CHECK(result->fused_gelu == 2 + (f.name == "bert_tiny"));
    auto scan = Scan(result->model.graph, ScanOptions{});
    INFO(scan.status().message());
    REQUIRE(scan.ok());
    CHECK(scan->boundary.kind == Boundary::Kind::kYieldOp);
    std::map<std::string, int> freq;
    for (const PlanGroup& g : scan->groups) freq[g.cluster_id] = g.freq;
    // A Gelu cluster per GELU and a Softmax cluster per layer.
    CHECK(freq["Gelu+"] == result->fused_gelu);  // BERT's MLM head has a third
    bool softmax = false;
    for (const auto& [cluster, n] : freq) softmax = softmax || (cluster.find("Softmax+") != std::string::npos && n == 2);
    CHECK(softmax);
    if (f.name == "gpt2_tiny") CHECK(scan->layer_boundaries.size() == 2);  // pre-LN blocks
  }
}

}  // namespace
}  // namespace memopt
