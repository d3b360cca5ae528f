// Executor tests with a private kernel registry (so they do not depend on the kernel files):
// measured peak against the hand-checked static estimate, feed validation, initializer reading,
// CheckSupported, YieldOp.
#include "exec/executor.h"

#include <filesystem>
#include <fstream>

#include <unistd.h>

#include <catch2/catch.hpp>

#include "helpers/analysis_test_util.h"
#include "analysis/scan.h"
#include "exec/input_binding.h"
#include "exec/kernels/kernel_util.h"

namespace memopt {
namespace {

Status BinaryFloat(KernelContext& ctx, float (*f)(float, float)) {
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  auto shape = BroadcastShape(a.shape(), b.shape());
  if (!shape) return ctx.Error("shapes do not broadcast");
  ctx.outputs[0] = Tensor(DataType::kFloat, *shape);
  BroadcastBinary(a.data<float>(), a.shape(), b.data<float>(), b.shape(), ctx.outputs[0].data<float>(), *shape, f);
  return Status::Ok();
}
Status TestAdd(KernelContext& ctx) { return BinaryFloat(ctx, [](float x, float y) { return x + y; }); }
Status TestMul(KernelContext& ctx) { return BinaryFloat(ctx, [](float x, float y) { return x * y; }); }
Status TestRelu(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  ctx.outputs[0] = Tensor(x.dtype(), x.shape());
  for (int64_t i = 0; i < x.numel(); ++i) ctx.outputs[0].data<float>()[i] = std::max(0.0f, x.data<float>()[i]);
  return Status::Ok();
}
/// Dropout in inference mode: identity plus an all-true mask.
Status TestDropout(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  ctx.outputs[0] = x.Clone();
  if (ctx.output_wanted(1)) {
    ctx.outputs[1] = Tensor(DataType::kBool, x.shape());
    for (int64_t i = 0; i < x.numel(); ++i) ctx.outputs[1].data<uint8_t>()[i] = 1;
  }
  return Status::Ok();
}
Status TestFail(KernelContext&) { return InvalidInput("something is wrong"); }

const KernelRegistry& TestRegistry() {
  static const KernelRegistry r = [] {
    KernelRegistry k;
    k.Register("", "Add", TestAdd, {DataType::kFloat});
    k.Register("", "Mul", TestMul, {DataType::kFloat});
    k.Register("", "Relu", TestRelu, {DataType::kFloat});
    k.Register("", "Dropout", TestDropout, {DataType::kFloat});
    k.Register("", "Fail", TestFail);
    k.Register("com.microsoft", "YieldOp", KernelRegistry::Cpu().Find("com.microsoft", "YieldOp")->fn);
    return k;
  }();
  return r;
}

Tensor Floats(std::vector<int64_t> shape, std::vector<float> values) {
  Tensor t(DataType::kFloat, std::move(shape));
  REQUIRE(static_cast<int64_t>(values.size()) == t.numel());
  std::copy(values.begin(), values.end(), t.data<float>());
  return t;
}

Tensor Iota(std::vector<int64_t> shape, float start = 0) {
  Tensor t(DataType::kFloat, std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = start + static_cast<float>(i);
  return t;
}

// Same graph as peak_estimate_test.cc (hand-checked there): order Mul, Relu, Dropout, Add.
constexpr const char* kGraph = R"(
    <ir_version: 8, opset_import: ["" : 15]>
    g (float[N, 4] x, float[4] w) => (float[N, 4] out) {
      a = Mul(x, w)
      b = Relu(a)
      c, mask = Dropout(b)
      out = Add(a, c)
    })";

TEST_CASE("executor: measured peak equals the static estimate on a hand-checked graph", "[exec][executor]") {
  Model m = testing::TextModel(kGraph, {"mul", "relu", "dropout", "add"});
  std::map<std::string, Tensor> feeds = {{"x", Iota({10, 4}, -20)}, {"w", Floats({4}, {1, -1, 2, 0.5f})}};
  RunOptions options;
  options.registry = &TestRegistry();
  auto run = Execute(m, feeds, options);
  INFO(run.status().message());
  REQUIRE(run.ok());
  // N = 10: always live x + w = 176; peak 696 at the Dropout step (see peak_estimate_test.cc).
  CHECK(run->memory.weights_and_inputs_bytes == 176);
  CHECK(run->memory.peak_bytes == 696);
  CHECK(run->memory.peak_position == 2);
  CHECK(run->memory.peak_node == testing::NodeByName(m.graph, "dropout"));
  CHECK(run->memory.live_at_peak == std::vector<std::string>{"a", "b", "c", "mask", "w", "x"});

  ScanOptions scan_options;
  scan_options.dims = DimsFromFeeds(m.graph, feeds);
  CHECK(scan_options.dims.Get("N") == 10);
  auto scan = Scan(m.graph, scan_options);
  REQUIRE(scan.ok());
  CHECK(scan->peak.peak_bytes == run->memory.peak_bytes);
  CHECK(scan->peak.peak_position == run->memory.peak_position);

  // out = a + relu(a), a = x * w.
  REQUIRE(run->outputs.count("out") == 1);
  const Tensor& out = run->outputs.at("out");
  CHECK(out.Describe() == "float[10, 4]");
  const float w[4] = {1, -1, 2, 0.5f};
  for (int64_t i = 0; i < 40; ++i) {
    const float a = (-20.0f + static_cast<float>(i)) * w[i % 4];
    CHECK(out.data<float>()[i] == a + std::max(0.0f, a));
  }
}

TEST_CASE("executor: feeds are checked against the declared inputs", "[exec][executor]") {
  Model m = testing::TextModel(R"(
    <ir_version: 8, opset_import: ["" : 15]>
    g (float[N, 784] x, float[N, 784] y) => (float[N, 784] out) {
      out = Add(x, y)
    })",
                               {"add"});
  RunOptions options;
  options.registry = &TestRegistry();
  auto error = [&](std::map<std::string, Tensor> feeds) {
    auto r = Execute(m, feeds, options);
    REQUIRE_FALSE(r.ok());
    return r.status().message();
  };
  Tensor ok(DataType::kFloat, {2, 784});
  CHECK(error({{"x", Tensor(DataType::kInt64, {2, 784})}, {"y", ok}}) == "input 'x': expected float, got int64");
  CHECK(error({{"x", Tensor(DataType::kFloat, {2, 784, 1})}, {"y", ok}}) ==
        "input 'x': rank 2 expected, got 3 (shape float[2, 784, 1])");
  CHECK(error({{"x", Tensor(DataType::kFloat, {2, 100})}, {"y", ok}}) == "input 'x': dim 1 is 784 in the model, got 100");
  CHECK(error({{"x", ok}, {"y", Tensor(DataType::kFloat, {3, 784})}}) ==
        "input 'y': dim 0 is 'N' = 2 (from input 'x'), got 3");
  CHECK(error({{"x", ok}}) == "input 'y' is not fed (float[N, 784])");
  CHECK(error({{"x", ok}, {"y", ok}, {"z", ok}}) == "feed 'z' is not a graph input or initializer of the model");
  CHECK(Execute(m, {{"x", ok}, {"y", ok}}, options).ok());
}

TEST_CASE("executor: CheckSupported lists every op without a kernel", "[exec][executor]") {
  Model m = testing::TextModel(R"(
    <ir_version: 8, opset_import: ["" : 15, "com.microsoft" : 1]>
    g (float[4] x) => (float[4] out) {
      a = Relu(x)
      b = com.microsoft.Foo(a)
      c = Bar(b)
      d = Bar(c)
      out = Add(d, a)
    })",
                               {"r", "a", "b", "b2", "add"});
  Status s = CheckSupported(m.graph, TestRegistry());
  CHECK(s.code() == ErrorCode::kUnsupported);
  CHECK(s.message() == "unsupported ops: Bar (node 'b'), com.microsoft::Foo (node 'a')");
  RunOptions options;
  options.registry = &TestRegistry();
  auto run = Execute(m, {{"x", Iota({4})}}, options);
  CHECK(run.status().message() == s.message());
}

TEST_CASE("executor: kernel errors name the node", "[exec][executor]") {
  Model m = testing::TextModel(R"(
    <ir_version: 8, opset_import: ["" : 15]>
    g (float[4] x) => (float[4] out) {
      out = Fail(x)
    })",
                               {"bad"});
  RunOptions options;
  options.registry = &TestRegistry();
  auto run = Execute(m, {{"x", Iota({4})}}, options);
  CHECK(run.status().message() == "node 'bad' (Fail): something is wrong");
}

constexpr const char* kInitGraph = R"(
    <ir_version: 8, opset_import: ["" : 15]>
    g (float[2, 3] x) => (float[2, 3] out)
      <float[3] w = {1.0, 2.0, 3.0}, float[2, 3] bias = {10, 20, 30, 40, 50, 60}, float[5] unused = {1, 2, 3, 4, 5}> {
      a = Mul(x, w)
      out = Add(a, bias)
    })";

void CheckInitGraphRun(const Model& m) {
  RunOptions options;
  options.registry = &TestRegistry();
  auto run = Execute(m, {{"x", Iota({2, 3})}}, options);
  INFO(run.status().message());
  REQUIRE(run.ok());
  const Tensor& out = run->outputs.at("out");
  const std::vector<float> expected = {10, 22, 36, 43, 58, 75};
  for (int64_t i = 0; i < 6; ++i) CHECK(out.data<float>()[i] == expected[i]);
  // x 24 + w 12 + bias 24 + unused 20 (counted although never read).
  CHECK(run->memory.weights_and_inputs_bytes == 80);
  CHECK(run->memory.peak_bytes == 80 + 24 + 24);
}

TEST_CASE("executor: initializers of text models and model files", "[exec][executor]") {
  Model text = testing::TextModel(kInitGraph, {"mul", "add"});
  CheckInitGraphRun(text);

  auto w = ReadInitializer(text, text.graph.FindValue("w"));
  REQUIRE(w.ok());
  CHECK(w->Describe() == "float[3]");
  CHECK(w->GetAsDouble(2) == 3.0);

  // The same model written to a file and loaded by path: raw_data read from the file.
  onnx::ModelProto proto;
  REQUIRE(proto.ParseFromString(*text.source_bytes));
  for (auto& init : *proto.mutable_graph()->mutable_initializer()) {
    std::vector<float> values(init.float_data().begin(), init.float_data().end());
    init.clear_float_data();
    init.set_raw_data(std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float)));
  }
  const auto path = std::filesystem::temp_directory_path() / ("memopt_exec_init_" + std::to_string(::getpid()) + ".onnx");
  {
    std::ofstream out(path, std::ios::binary);
    proto.SerializeToOstream(&out);
  }
  auto loaded = LoadModel(path.string());
  REQUIRE(loaded.ok());
  REQUIRE(loaded->graph.value(loaded->graph.FindValue("w")).initializer->raw_data_offset.has_value());
  CheckInitGraphRun(*loaded);
  std::filesystem::remove(path);
}

TEST_CASE("executor: fed initializers replace the stored values", "[exec][executor]") {
  Model m = testing::TextModel(kInitGraph, {"mul", "add"});
  RunOptions options;
  options.registry = &TestRegistry();
  auto run = Execute(m, {{"x", Iota({2, 3})}, {"w", Floats({3}, {0, 0, 0})}}, options);
  REQUIRE(run.ok());
  CHECK(run->outputs.at("out").data<float>()[5] == 60.0f);
  auto bad = Execute(m, {{"x", Iota({2, 3})}, {"w", Floats({1}, {0})}}, options);
  CHECK(bad.status().message() == "initializer 'w': fed float[1], the model has float[3]");
}

TEST_CASE("executor: YieldOp feeds the incoming gradients loss.backward() would", "[exec][executor]") {
  Model m = testing::TextModel(R"(
    <ir_version: 8, opset_import: ["" : 15, "com.microsoft" : 1]>
    g (float[3] x, float[2] y, float[1] z) => (float[3] gx, float[1] gl) {
      out = Relu(x)
      mask = Relu(y)
      loss = Relu(z)
      gx, gl = com.microsoft.YieldOp <non_differentiable_outputs = [1], full_shape_outputs = [0, 2]> (out, mask, loss)
    })",
                               {"relu", "relu2", "relu3", "yield"});
  std::map<std::string, Tensor> feeds = {{"x", Floats({3}, {-1, 2, 3})}, {"y", Iota({2})}, {"z", Floats({1}, {5})}};
  RunOptions options;
  options.registry = &TestRegistry();
  auto run = Execute(m, feeds, options);
  INFO(run.status().message());
  REQUIRE(run.ok());
  // A one-element output is a loss: d loss / d loss = 1, whatever the loss value (5).
  CHECK(run->outputs.at("gl").Describe() == "float[1]");
  CHECK(run->outputs.at("gl").GetAsDouble(0) == 1.0);
  // Other outputs: seeded uniform values in [-1, 1), the same for the same seed and name.
  const Tensor& gx = run->outputs.at("gx");
  CHECK(gx.Describe() == "float[3]");
  for (int64_t i = 0; i < 3; ++i) CHECK(std::abs(gx.GetAsDouble(i)) < 1.0);
  CHECK(gx.GetAsDouble(0) != gx.GetAsDouble(1));
  auto again = Execute(m, feeds, options);
  REQUIRE(again.ok());
  CHECK(again->outputs.at("gx").GetAsDouble(2) == gx.GetAsDouble(2));
  options.seed = 1;
  CHECK(Execute(m, feeds, options)->outputs.at("gx").GetAsDouble(2) != gx.GetAsDouble(2));
  // --output-grads ones.
  options.output_grads.mode = OutputGradMode::kOnes;
  CHECK(Execute(m, feeds, options)->outputs.at("gx").GetAsDouble(1) == 1.0);
  // Given gradients win, and must match the output they are the gradient of.
  options.output_grads.given["gx"] = Floats({3}, {7, 8, 9});
  options.output_grads.given["gl"] = Floats({1}, {0.5});
  run = Execute(m, feeds, options);
  REQUIRE(run.ok());
  CHECK(run->outputs.at("gx").GetAsDouble(2) == 9.0);
  CHECK(run->outputs.at("gl").GetAsDouble(0) == 0.5);
  options.output_grads.given["gx"] = Floats({2}, {7, 8});
  CHECK(Execute(m, feeds, options).status().message() ==
        "node 'yield' (YieldOp): incoming gradient 'gx' is float[2]; the output it is the gradient of is float[3]");
  // The names a caller may use: the YieldOp output's, or "<module output>_grad".
  const std::map<std::string, std::string> names = YieldGradientNames(m.graph);
  CHECK(names == std::map<std::string, std::string>{{"gl", "gl"}, {"gx", "gx"}, {"loss_grad", "gl"}, {"out_grad", "gx"}});
}

TEST_CASE("executor: explicit orders are checked", "[exec][executor]") {
  Model m = testing::TextModel(kGraph, {"mul", "relu", "dropout", "add"});
  std::map<std::string, Tensor> feeds = {{"x", Iota({1, 4})}, {"w", Iota({4})}};
  RunOptions options;
  options.registry = &TestRegistry();
  options.order = {1, 0, 2, 3};
  CHECK(Execute(m, feeds, options).status().message() ==
        "node 'relu' (Relu): input 'a' is not available (it is not computed before this node in the order)");
  options.order = {0, 0};
  CHECK(Execute(m, feeds, options).status().message() == "execution order lists node 'mul' (Mul) twice");
  options.order = {0, 1, 2};
  CHECK(Execute(m, feeds, options).status().message() ==
        "graph output 'out' was not computed (its producer is not in the order)");
  options.order = {0, 1, 2, 3};
  CHECK(Execute(m, feeds, options).ok());
}

}  // namespace
}  // namespace memopt
