// Finite-difference checks of the element-wise gradient rules (ops/elementwise/elementwise_gradients.cc), including
// numpy broadcasting with static and symbolic shapes.
#include "grad/grad_check_util.h"

namespace memopt {
namespace {

using testing::CountOps;
using testing::GradCheck;
using testing::RunGradCheck;

GradCheck Binary(const std::string& op, const std::string& a, const std::string& b, const std::string& y,
                 int opset = 17) {
  GradCheck c;
  c.text = "<ir_version: 8, opset_import: [\"\" : " + std::to_string(opset) + "]>\n g (double" + a +
           " a, double" + b + " b) => (double" + y + " y) {\n y = " + op + "(a, b)\n }";
  c.options.trainable = "^(a|b)$";
  return c;
}

TEST_CASE("grad check: Add / Sub / Mul / Div with broadcasting", "[grad][gradcheck]") {
  for (const std::string op : {"Add", "Sub", "Mul", "Div"}) {
    SECTION(op + " same shape") {
      GradCheck c = Binary(op, "[2, 3]", "[2, 3]", "[2, 3]");
      if (op == "Div") c.ranges["b"] = {0.5, 2.0};
      RunGradCheck(c);
    }
    SECTION(op + " trailing vector") {
      GradCheck c = Binary(op, "[2, 3]", "[3]", "[2, 3]");
      if (op == "Div") c.ranges["b"] = {0.5, 2.0};
      RunGradCheck(c);
    }
    SECTION(op + " both broadcast") {
      GradCheck c = Binary(op, "[2, 1, 4]", "[3, 1]", "[2, 3, 4]");
      if (op == "Div") c.ranges["b"] = {0.5, 2.0};
      auto r = RunGradCheck(c);
      CHECK(CountOps(r, "BroadcastGradientArgs") == 0);  // decided statically
    }
    SECTION(op + " scalar") {
      GradCheck c;
      c.text = "<ir_version: 8, opset_import: [\"\" : 17]>\n g (double[2, 3] a, double[1] b) => (double[2, 3] y) {\n"
               " s = Squeeze(b)\n y = " + op + "(a, s)\n }";
      c.options.trainable = "^(a|b)$";
      if (op == "Div") c.ranges["b"] = {0.5, 2.0};
      RunGradCheck(c);
    }
  }
}

TEST_CASE("grad check: broadcasting decided at run time (different symbolic dims)", "[grad][gradcheck]") {
  for (int opset : {12, 17}) {
    GradCheck c;
    c.text = "<ir_version: 8, opset_import: [\"\" : " + std::to_string(opset) + R"(]>
      g (double[2, 3] x, double[2, 1] s, int64[2] shape_a, int64[2] shape_b) => (double[2, 3] y) {
        a = Reshape(x, shape_a)
        b = Reshape(s, shape_b)
        y = Mul(a, b)
      })";
    c.fixed["shape_a"] = testing::Int64s({2}, {2, 3});
    c.fixed["shape_b"] = testing::Int64s({2}, {2, 1});
    c.options.trainable = "^(x|s)$";
    auto r = RunGradCheck(c);
    CHECK(CountOps(r, "BroadcastGradientArgs") >= 1);
    CHECK(CountOps(r, "ReduceSumTraining") == (opset < 13 ? CountOps(r, "BroadcastGradientArgs") : 0));
  }
}

TEST_CASE("grad check: the same tensor twice (partials summed)", "[grad][gradcheck]") {
  GradCheck c;
  c.text = R"(<ir_version: 8, opset_import: ["" : 17]>
    g (double[2, 3] x) => (double[2, 3] y) {
      sq = Mul(x, x)
      y = Add(sq, x)
    })";
  c.options.trainable = "^x$";
  auto r = RunGradCheck(c);
  CHECK(CountOps(r, "Sum") == 1);
  bool found = false;
  for (const Node& n : r.model.graph.nodes) found = found || n.name == "AccumulateGrad_x_grad";
  CHECK(found);
}

TEST_CASE("grad check: Pow / Sqrt / Exp / Log / Erf / Neg / Reciprocal / Abs / Sin / Cos", "[grad][gradcheck]") {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"Pow3", "e = Constant <value = double[1] {3.0}> ()\n y = Pow(x, e)"},
      {"PowHalf", "e = Constant <value = double[1] {0.5}> ()\n y = Pow(x, e)"},
      {"PowIntExponent", "e = Constant <value = int64[1] {2}> ()\n y = Pow(x, e)"},
      {"Sqrt", "y = Sqrt(x)"},
      {"Exp", "y = Exp(x)"},
      {"Log", "y = Log(x)"},
      {"Erf", "y = Erf(x)"},
      {"Neg", "y = Neg(x)"},
      {"Reciprocal", "y = Reciprocal(x)"},
      {"Abs", "y = Abs(x)"},
      {"Sin", "y = Sin(x)"},
      {"Cos", "y = Cos(x)"},
      {"Identity", "y = Identity(x)"},
      {"CastRoundTrip", "h = Cast <to = 11> (x)\n y = Identity(h)"},
  };
  for (const auto& [name, body] : cases) {
    SECTION(name) {
      GradCheck c;
      c.text = "<ir_version: 8, opset_import: [\"\" : 17]>\n g (double[2, 3] x) => (double[2, 3] y) {\n" + body +
               "\n }";
      c.options.trainable = "^x$";
      c.ranges["x"] = {0.3, 1.5};  // positive: Log, Sqrt, Pow 0.5; away from 0: Abs
      RunGradCheck(c);
    }
  }
}

TEST_CASE("grad check: Pow with a trainable, broadcast exponent", "[grad][gradcheck]") {
  GradCheck c = Binary("Pow", "[2, 3]", "[3]", "[2, 3]");
  c.ranges["a"] = {0.3, 1.5};
  RunGradCheck(c);
}

// Cast and CastLike (the dynamo exporter's casts): the gradient goes back to X's type; CastLike's
// type source gets none.
TEST_CASE("grad check: Cast and CastLike through float32", "[grad][gradcheck]") {
  const std::pair<const char*, const char*> cases[] = {
      {"Cast", "f = Cast <to = 1> (x)"},
      {"CastLike", "like = Constant <value = float[1] {0.0}> ()\n      f = CastLike(x, like)"},
  };
  for (const auto& [op, cast] : cases) {
    SECTION(op) {
      GradCheck c;
      c.text = std::string(R"(<ir_version: 8, opset_import: ["" : 17]>
    g (double[2, 3] x) => (double[2, 3] y) {
      )") + cast + R"(
      t = Tanh(f)
      y = Cast <to = 11> (t)
    })";
      c.options.trainable = "^x$";
      c.step = 1e-3;
      c.tol = 1e-4;
      auto r = RunGradCheck(c);
      // Two gradient Casts, beside the forward's two Casts (or one Cast and the CastLike).
      CHECK(CountOps(r, "Cast") == (std::string(op) == "Cast" ? 4 : 3));
    }
  }
}

TEST_CASE("grad check: Where with broadcast branches", "[grad][gradcheck]") {
  GradCheck c;
  c.text = R"(<ir_version: 8, opset_import: ["" : 17]>
    g (bool[2, 3] cond, double[3] a, double[2, 1] b) => (double[2, 3] y) {
      y = Where(cond, a, b)
    })";
  Tensor cond(DataType::kBool, {2, 3});
  const uint8_t pattern[6] = {1, 0, 1, 1, 0, 0};
  std::copy(pattern, pattern + 6, cond.data<uint8_t>());
  c.fixed["cond"] = cond;
  c.options.trainable = "^(a|b)$";
  RunGradCheck(c);
}

TEST_CASE("grad check: Clip (opset 13 inputs and opset 6 attributes)", "[grad][gradcheck]") {
  SECTION("inputs") {
    GradCheck c;
    c.text = R"(<ir_version: 8, opset_import: ["" : 13]>
      g (double[2, 4] x) => (double[2, 4] y) {
        lo = Constant <value = double {-0.5}> ()
        hi = Constant <value = double {0.45}> ()
        y = Clip(x, lo, hi)
      })";
    c.options.trainable = "^x$";
    RunGradCheck(c);
  }
  SECTION("only a max") {
    GradCheck c;
    c.text = R"(<ir_version: 8, opset_import: ["" : 13]>
      g (double[2, 4] x) => (double[2, 4] y) {
        hi = Constant <value = double {0.25}> ()
        y = Clip(x, , hi)
      })";
    c.options.trainable = "^x$";
    RunGradCheck(c);
  }
}

TEST_CASE("grad check: Min / Max / Sum / Mean over broadcast inputs", "[grad][gradcheck]") {
  for (const std::string op : {"Min", "Max", "Sum", "Mean"}) {
    SECTION(op) {
      GradCheck c;
      c.text = "<ir_version: 8, opset_import: [\"\" : 17]>\n g (double[2, 3] a, double[3] b, double[2, 1] d) => "
               "(double[2, 3] y) {\n y = " + op + "(a, b, d)\n }";
      c.options.trainable = "^(a|b|d)$";
      RunGradCheck(c);
    }
  }
}

}  // namespace
}  // namespace memopt
