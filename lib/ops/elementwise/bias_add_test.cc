// com.microsoft BiasAdd end to end: registry entry, shape inference and its errors, CPU values by
// hand, the decode's errors, the gradient against finite differences.
#include "grad/grad_check_util.h"
#include "ir/op_registry.h"
#include "ops/elementwise/bias_add.h"
#include "shape/shape_infer.h"

namespace memopt {
namespace {

constexpr const char* kModel = R"(
  <ir_version: 8, opset_import: ["" : 17, "com.microsoft" : 1]>
  g (float[1, 2, 3] x, float[3] bias, float[1, 2, 3] skip) => (float[1, 2, 3] y) {
    y = com.microsoft.BiasAdd (x, bias, skip)
  }
)";

TEST_CASE("BiasAdd: one definition with a shape rule, CPU kernel, gradient and cost", "[ops][elementwise]") {
  const OpDef* def = Ops().FindExact("com.microsoft", "BiasAdd");
  REQUIRE(def != nullptr);
  CHECK(def->shape != nullptr);
  CHECK(def->cpu.fn != nullptr);
  CHECK(def->cpu_file == "elementwise/bias_add_cpu");
  CHECK(def->grad.rule != nullptr);
  CHECK(def->cost.kind == CostKind::kElementwise);
  CHECK(def->cost.factor == 2);
}

TEST_CASE("BiasAdd: shape and values by hand", "[ops][elementwise]") {
  Expected<Model> model = LoadModelFromText(kModel);
  REQUIRE(model.ok());
  Expected<ShapeInferenceStats> stats = InferShapes(model->graph);
  REQUIRE(stats.ok());
  const Value& y = model->graph.value(model->graph.FindValue("y"));
  REQUIRE(y.info.shape.has_value());
  CHECK(y.info.shape->size() == 3);
  CHECK(y.info.dtype == DataType::kFloat);

  Tensor x(DataType::kFloat, {1, 2, 3}), bias(DataType::kFloat, {3}), skip(DataType::kFloat, {1, 2, 3});
  const float xs[] = {1, 2, 3, 4, 5, 6}, bs[] = {0.5f, -1, 10}, ss[] = {-1, 0.25f, 0, 100, -5, 1};
  for (int i = 0; i < 6; ++i) x.data<float>()[i] = xs[i], skip.data<float>()[i] = ss[i];
  for (int i = 0; i < 3; ++i) bias.data<float>()[i] = bs[i];
  auto run = Execute(*model, {{"x", x}, {"bias", bias}, {"skip", skip}}, testing::InOrder(*model));
  INFO(run.status().message());
  REQUIRE(run.ok());
  const float* out = run->outputs.at("y").data<float>();
  // Row 0: 1+0.5-1, 2-1+0.25, 3+10+0; row 1: 4+0.5+100, 5-1-5, 6+10+1.
  const float expected[] = {0.5f, 1.25f, 13, 104.5f, -1, 17};
  for (int i = 0; i < 6; ++i) CHECK(out[i] == expected[i]);
}

TEST_CASE("BiasAdd: inputs of the wrong rank or length are errors that say why", "[ops][elementwise]") {
  SECTION("shape inference: X must be 3-D") {
    Expected<Model> model = LoadModelFromText(R"(
      <ir_version: 8, opset_import: ["" : 17, "com.microsoft" : 1]>
      g (float[2, 3] x, float[3] bias, float[2, 3] skip) => (float[2, 3] y) {
        y = com.microsoft.BiasAdd (x, bias, skip)
      })");
    REQUIRE(model.ok());
    Expected<ShapeInferenceStats> stats = InferShapes(model->graph);
    REQUIRE_FALSE(stats.ok());
    CHECK_THAT(stats.status().message(), Catch::Contains("X must be 3-D (N, S, C), not rank 2"));
  }
  SECTION("decode: bias against C, skip against X, types") {
    const Tensor x(DataType::kFloat, {2, 4, 3});
    auto plan = bias_add::DecodeBiasAdd(x, Tensor(DataType::kFloat, {3}), Tensor(DataType::kFloat, {2, 4, 3}));
    REQUIRE(plan.ok());
    CHECK(plan->rows == 8);
    CHECK(plan->channels == 3);
    auto bad_bias = bias_add::DecodeBiasAdd(x, Tensor(DataType::kFloat, {4}), Tensor(DataType::kFloat, {2, 4, 3}));
    REQUIRE_FALSE(bad_bias.ok());
    CHECK(bad_bias.status().message() == "bias [4] must be 1-D with X's channel count 3");
    auto bad_skip = bias_add::DecodeBiasAdd(x, Tensor(DataType::kFloat, {3}), Tensor(DataType::kFloat, {1, 4, 3}));
    REQUIRE_FALSE(bad_skip.ok());
    CHECK(bad_skip.status().message() == "skip [1, 4, 3] must have X's shape [2, 4, 3]");
    auto bad_type = bias_add::DecodeBiasAdd(x, Tensor(DataType::kFloat16, {3}), Tensor(DataType::kFloat, {2, 4, 3}));
    REQUIRE_FALSE(bad_type.ok());
    CHECK_THAT(bad_type.status().message(), Catch::Contains("must have X's type float"));
  }
}

TEST_CASE("BiasAdd: the gradient matches finite differences", "[ops][elementwise][gradcheck]") {
  testing::GradCheck c;
  c.text = R"(<ir_version: 8, opset_import: ["" : 17, "com.microsoft" : 1]>
    g (double[2, 3, 4] x, double[4] bias, double[2, 3, 4] skip) => (double[2, 3, 4] y) {
      y = com.microsoft.BiasAdd (x, bias, skip)
    })";
  c.options.trainable = "^(x|bias|skip)$";
  auto r = testing::RunGradCheck(c);
  CHECK(testing::CountOps(r, "ReduceSum") == 1);
  CHECK(testing::CountOps(r, "Identity") == 2);
}

}  // namespace
}  // namespace memopt
