// Finite-difference checks of activation, softmax and dropout gradients (ops/activation/activation_gradients.cc).
#include "grad/grad_check_util.h"

namespace memopt {
namespace {

using testing::CountOps;
using testing::GradCheck;
using testing::RunGradCheck;

GradCheck Unary(const std::string& body, int opset = 17, const std::string& shape = "[2, 3, 4]") {
  GradCheck c;
  c.text = "<ir_version: 8, opset_import: [\"\" : " + std::to_string(opset) +
           ", \"com.microsoft\" : 1]>\n g (double" + shape + " x) => (double" + shape + " y) {\n" + body + "\n }";
  c.options.trainable = "^x$";
  return c;
}

TEST_CASE("grad check: activations use ORT's gradient ops", "[grad][gradcheck]") {
  const std::vector<std::tuple<std::string, std::string, std::string>> cases = {
      {"Relu", "y = Relu(x)", "ReluGrad"},
      {"LeakyRelu", "y = LeakyRelu <alpha = 0.2> (x)", "LeakyReluGrad"},
      {"Sigmoid", "y = Sigmoid(x)", "SigmoidGrad"},
      {"Tanh", "y = Tanh(x)", "TanhGrad"},
      {"Softplus", "y = Softplus(x)", "Sigmoid"},
      {"Gelu", "y = com.microsoft.Gelu(x)", "GeluGrad"},
      {"FastGelu", "y = com.microsoft.FastGelu(x)", "FastGeluGrad"},
      {"QuickGelu", "y = com.microsoft.QuickGelu <alpha = 1.5> (x)", "QuickGeluGrad"},
      {"Softmax13", "y = Softmax <axis = 1> (x)", "SoftmaxGrad_13"},
      {"LogSoftmax13", "y = LogSoftmax(x)", "LogSoftmaxGrad_13"},
  };
  for (const auto& [name, body, grad_op] : cases) {
    SECTION(name) {
      GradCheck c = Unary(body);
      auto r = RunGradCheck(c);
      CHECK(CountOps(r, grad_op) == 1);
    }
  }
}

TEST_CASE("grad check: ONNX Gelu (opset 20), exact and tanh", "[grad][gradcheck]") {
  auto exact = RunGradCheck(Unary("y = Gelu(x)", 20));
  CHECK(CountOps(exact, "GeluGrad") == 1);
  auto tanh = RunGradCheck(Unary("y = Gelu <approximate = \"tanh\"> (x)", 20));
  CHECK(CountOps(tanh, "FastGeluGrad") == 1);
}

TEST_CASE("grad check: LeakyRelu with a negative slope reads X", "[grad][gradcheck]") {
  RunGradCheck(Unary("y = LeakyRelu <alpha = -0.3> (x)"));
}

TEST_CASE("grad check: opset-11 softmax semantics (2-D view at axis)", "[grad][gradcheck]") {
  for (const std::string op : {"Softmax", "LogSoftmax"}) {
    SECTION(op) {
      GradCheck c = Unary("y = " + op + " <axis = 1> (x)", 12);
      auto r = RunGradCheck(c);
      CHECK(CountOps(r, op + "Grad") == 1);
    }
  }
}

TEST_CASE("grad check: BiasGelu and FastGelu with bias", "[grad][gradcheck]") {
  for (const std::string op : {"BiasGelu", "FastGelu"}) {
    SECTION(op) {
      GradCheck c;
      c.text = "<ir_version: 8, opset_import: [\"\" : 17, \"com.microsoft\" : 1]>\n"
               " g (double[2, 3, 4] x, double[4] b) => (double[2, 3, 4] y) {\n y = com.microsoft." + op +
               "(x, b)\n }";
      c.options.trainable = "^(x|b)$";
      auto r = RunGradCheck(c);
      CHECK(CountOps(r, op == "BiasGelu" ? "BiasGeluGrad_dX" : "BiasFastGeluGrad_dX") == 1);
    }
  }
}

TEST_CASE("grad check: Dropout", "[grad][gradcheck]") {
  SECTION("training: DropoutGrad with the forward mask") {
    GradCheck c = Unary(R"(ratio = Constant <value = double {0.4}> ()
        mode = Constant <value = bool {1}> ()
        y = Dropout <seed = 5> (x, ratio, mode))");
    auto r = RunGradCheck(c);
    CHECK(CountOps(r, "DropoutGrad") == 1);
    // The forward Dropout got a mask output.
    CHECK(r.model.graph.value(r.model.graph.FindValue("y_mask")).producer != kNone);
  }
  SECTION("inference: identity") {
    GradCheck c = Unary("y = Dropout(x)");
    auto r = RunGradCheck(c);
    CHECK(CountOps(r, "DropoutGrad") == 0);
  }
}

}  // namespace
}  // namespace memopt

namespace memopt {
namespace {

TEST_CASE("grad check: the erf form of GELU is fused into Gelu (both exporter forms)", "[grad][gradcheck]") {
  const std::vector<std::string> bodies = {
      // torch.onnx's F.gelu
      R"(c = Constant <value = double {1.4142135381698608}> ()
         d = Div(x, c)
         e = Erf(d)
         one = Constant <value = double {1.0}> ()
         a = Add(e, one)
         m = Mul(x, a)
         half = Constant <value = double {0.5}> ()
         y = Mul(m, half))",
      // Hugging Face's gelu: x * 0.5 * (1 + erf(x * 1/sqrt(2)))
      R"(half = Constant <value = double {0.5}> ()
         h = Mul(x, half)
         c = Constant <value = double {0.7071067811865476}> ()
         d = Mul(c, x)
         e = Erf(d)
         one = Constant <value = double {1.0}> ()
         a = Add(one, e)
         y = Mul(h, a))",
  };
  for (const std::string& body : bodies) {
    testing::GradCheck c;
    c.text = "<ir_version: 8, opset_import: [\"\" : 17]>\n g (double[2, 3] x) => (double[2, 3] y) {\n" + body + "\n }";
    c.options.trainable = "^x$";
    auto r = testing::RunGradCheck(c);
    CHECK(r.fused_gelu == 1);
    CHECK(testing::CountOps(r, "GeluGrad") == 1);
    CHECK(testing::CountOps(r, "Erf") == 0);
    CHECK(testing::CountOps(r, "Constant") == 0);
  }
  testing::GradCheck c;
  c.text = std::string("<ir_version: 8, opset_import: [\"\" : 17]>\n g (double[2, 3] x) => (double[2, 3] y) {\n") +
           bodies[0] + "\n }";
  c.options.trainable = "^x$";
  c.options.fuse_gelu = false;
  auto r = testing::RunGradCheck(c);
  CHECK(r.fused_gelu == 0);
  CHECK(testing::CountOps(r, "GeluGrad") == 0);
}

}  // namespace
}  // namespace memopt

namespace memopt {
namespace {

TEST_CASE("grad: GELU fusion leaves shared intermediates alone", "[grad]") {
  auto model = LoadModelFromText(R"(<ir_version: 8, opset_import: ["" : 17]>
    g (float[2, 3] x) => (float[2, 3] y, float[2, 3] e) {
      c = Constant <value = float {1.4142135381698608}> ()
      d = Div(x, c)
      e = Erf(d)
      one = Constant <value = float {1.0}> ()
      a = Add(e, one)
      m = Mul(x, a)
      half = Constant <value = float {0.5}> ()
      y = Mul(m, half)
    })");
  REQUIRE(model.ok());
  GradOptions o;
  o.trainable = "^x$";
  auto r = BuildGradientGraph(*model, o);
  INFO(r.status().message());
  REQUIRE(r.ok());
  CHECK(r->fused_gelu == 0);  // e is a graph output
  CHECK(testing::CountOps(*r, "Erf") == 1);
}

}  // namespace
}  // namespace memopt
