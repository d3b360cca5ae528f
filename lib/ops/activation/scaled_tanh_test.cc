// ScaledTanh end to end: registry entry, shape, CPU values by hand, gradient by finite differences.
#include "grad/grad_check_util.h"
#include "ir/op_registry.h"
#include "shape/shape_infer.h"

namespace memopt {
namespace {

constexpr const char* kModel = R"(
  <ir_version: 8, opset_import: ["" : 17]>
  g (float[3] x) => (float[3] y) {
    y = ScaledTanh <alpha = 2.0, beta = 0.5> (x)
  }
)";

TEST_CASE("ScaledTanh: one definition with a shape rule, CPU kernel, gradient and cost", "[ops][activation]") {
  const OpDef* def = Ops().FindExact("ai.onnx", "ScaledTanh");
  REQUIRE(def != nullptr);
  CHECK(def->shape != nullptr);
  CHECK(def->cpu.fn != nullptr);
  CHECK(def->grad.rule != nullptr);
  CHECK(def->cost.kind == CostKind::kElementwise);
}

TEST_CASE("ScaledTanh: shape and values by hand", "[ops][activation]") {
  Expected<Model> model = LoadModelFromText(kModel);
  REQUIRE(model.ok());
  Expected<ShapeInferenceStats> stats = InferShapes(model->graph);
  REQUIRE(stats.ok());
  const Value& y = model->graph.value(model->graph.FindValue("y"));
  REQUIRE(y.info.shape.has_value());
  CHECK(y.info.shape->size() == 1);
  CHECK(y.info.dtype == DataType::kFloat);

  Tensor x(DataType::kFloat, {3});
  const float xs[] = {0.0f, 0.5f, -1.0f};
  for (int i = 0; i < 3; ++i) x.data<float>()[i] = xs[i];
  auto run = Execute(*model, {{"x", x}}, testing::InOrder(*model));
  INFO(run.status().message());
  REQUIRE(run.ok());
  const Tensor& out = run->outputs.at("y");
  // 2 tanh(0) = 0; 2 tanh(0.25) = 0.489837324807...; 2 tanh(-0.5) = -0.924234314520...
  CHECK(out.data<float>()[0] == 0.0f);
  CHECK(out.data<float>()[1] == Approx(0.48983732480741826).epsilon(1e-6));
  CHECK(out.data<float>()[2] == Approx(-0.9242343145200195).epsilon(1e-6));
}

TEST_CASE("ScaledTanh: the gradient matches finite differences", "[ops][activation][gradcheck]") {
  for (const char* attrs : {"alpha = 2.0, beta = 0.5", "alpha = 0.0, beta = 3.0", "alpha = -1.5, beta = 1.25"}) {
    SECTION(attrs) {
      testing::GradCheck c;
      c.text = std::string(R"(<ir_version: 8, opset_import: ["" : 17, "com.microsoft" : 1]>
        g (double[2, 3] x) => (double[2, 3] y) { y = ScaledTanh <)") +
               attrs + "> (x) }";
      c.options.trainable = "^x$";
      auto r = testing::RunGradCheck(c);
      CHECK(testing::CountOps(r, "TanhGrad") == 1);
    }
  }
}

}  // namespace
}  // namespace memopt
