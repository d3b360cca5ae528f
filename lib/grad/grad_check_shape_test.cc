// Finite-difference checks of data-movement gradients (ops/layout/layout_gradients.cc), at opset 12 (axes as
// attributes) and 17 (axes as inputs), with static and symbolic shapes.
#include "grad/grad_check_util.h"

namespace memopt {
namespace {

using testing::CountOps;
using testing::GradCheck;
using testing::Int64s;
using testing::RunGradCheck;

GradCheck Graph1(const std::string& signature, const std::string& body, const std::string& trainable, int opset = 17) {
  GradCheck c;
  c.text = "<ir_version: 8, opset_import: [\"\" : " + std::to_string(opset) + "]>\n g " + signature + " {\n" + body +
           "\n }";
  c.options.trainable = trainable;
  return c;
}

TEST_CASE("grad check: Reshape / Flatten / Transpose / Squeeze / Unsqueeze", "[grad][gradcheck]") {
  SECTION("Reshape (constant shape) then Tanh") {
    RunGradCheck(Graph1("(double[2, 3, 4] x) => (double[6, 4] y)",
                        "s = Constant <value = int64[2] {6, -1}> ()\n r = Reshape(x, s)\n y = Tanh(r)", "^x$"));
  }
  SECTION("Flatten") {
    RunGradCheck(Graph1("(double[2, 3, 4] x) => (double[6, 4] y)", "f = Flatten <axis = 2> (x)\n y = Sin(f)", "^x$"));
  }
  SECTION("Transpose with perm and without") {
    RunGradCheck(Graph1("(double[2, 3, 4] x) => (double[3, 2, 4] y)",
                        "t = Transpose <perm = [1, 2, 0]> (x)\n u = Transpose(t)\n v = Sin(u)\n y = Transpose <perm = [1, 2, 0]> (v)",
                        "^x$"));
  }
  for (int opset : {12, 17}) {
    SECTION("Squeeze / Unsqueeze opset " + std::to_string(opset)) {
      const std::string body =
          opset < 13 ? "u = Unsqueeze <axes = [0, -1]> (x)\n s = Squeeze <axes = [0]> (u)\n y = Squeeze(s)"
                     : "a = Constant <value = int64[2] {0, -1}> ()\n b = Constant <value = int64[1] {0}> ()\n"
                       " u = Unsqueeze(x, a)\n s = Squeeze(u, b)\n y = Squeeze(s)";
      RunGradCheck(Graph1("(double[2, 3] x) => (double[2, 3] y)", body, "^x$", opset));
    }
  }
  // onnxscript's torch_lib (PyTorch's dynamo exporter) gives Unsqueeze a scalar axes tensor, which
  // ORT accepts; the Squeeze of the gradient gets a 1-D one (ORT's Squeeze refuses a scalar).
  SECTION("Unsqueeze with a scalar axes tensor") {
    auto r = RunGradCheck(Graph1("(double[2, 3] x) => (double[2, 1, 3] y)",
                                 "a = Constant <value = int64 {1}> ()\n u = Unsqueeze(x, a)\n y = Sin(u)", "^x$"));
    for (const Node& n : r.model.graph.nodes) {
      if (n.op_type != "Squeeze") continue;
      const auto& shape = r.model.graph.value(n.inputs[1]).info.shape;
      REQUIRE(shape.has_value());
      CHECK(shape->size() == 1);
    }
  }
}

TEST_CASE("grad check: Concat and Split", "[grad][gradcheck]") {
  for (int opset : {12, 17}) {
    const std::string o = " opset " + std::to_string(opset);
    SECTION("Concat static" + o) {
      RunGradCheck(Graph1("(double[2, 3] a, double[2, 1] b, double[2, 2] c) => (double[2, 6] y)",
                          "y = Concat <axis = -1> (a, b, c)", "^(a|c)$", opset));
    }
    SECTION("Concat with a symbolic length" + o) {
      GradCheck c = Graph1("(double[2, 3] a, double[2, 2] x, int64[2] s) => (double[2, 5] y)",
                           "b = Reshape(x, s)\n y = Concat <axis = 1> (a, b)", "^(a|x)$", opset);
      c.fixed["s"] = Int64s({2}, {2, 2});
      auto r = RunGradCheck(c);
      CHECK(CountOps(r, opset < 13 ? "Slice" : "Split") >= 1);
    }
    SECTION("Split with an unused output" + o) {
      const std::string body = opset < 13 ? "p, q, r = Split <axis = 1, split = [1, 2, 1]> (x)\n y = Add(p, r)"
                                          : "sp = Constant <value = int64[3] {1, 2, 1}> ()\n"
                                            " p, q, r = Split <axis = 1> (x, sp)\n y = Add(p, r)";
      auto r = RunGradCheck(Graph1("(double[2, 4] x) => (double[2, 1] y)", body, "^x$", opset));
      CHECK(CountOps(r, "ConstantOfShape") == 1);
    }
  }
}

TEST_CASE("grad check: Slice / Gather / GatherElements / GatherND", "[grad][gradcheck]") {
  SECTION("Slice with steps and negative indices") {
    auto r = RunGradCheck(Graph1("(double[4, 6] x) => (double[2, 2] y)",
                                 "st = Constant <value = int64[2] {1, -1}> ()\n"
                                 " en = Constant <value = int64[2] {3, 0}> ()\n"
                                 " ax = Constant <value = int64[2] {0, 1}> ()\n"
                                 " sp = Constant <value = int64[2] {1, -3}> ()\n"
                                 " y = Slice(x, st, en, ax, sp)",
                                 "^x$"));
    CHECK(CountOps(r, "SliceGrad") == 1);
  }
  SECTION("Gather (embedding with repeated ids)") {
    GradCheck c = Graph1("(double[5, 3] emb, int64[2, 3] ids) => (double[2, 3, 3] y)",
                         "y = Gather(emb, ids)", "^emb$");
    c.fixed["ids"] = Int64s({2, 3}, {0, 4, 4, 2, 0, -1});
    auto r = RunGradCheck(c);
    CHECK(CountOps(r, "GatherGrad") == 1);
  }
  SECTION("Gather on axis 1") {
    GradCheck c = Graph1("(double[2, 4] x, int64[3] ids) => (double[2, 3] y)", "y = Gather <axis = 1> (x, ids)",
                         "^x$");
    c.fixed["ids"] = Int64s({3}, {3, 1, 3});
    RunGradCheck(c);
  }
  SECTION("GatherElements") {
    GradCheck c = Graph1("(double[2, 3] x, int64[2, 2] ids) => (double[2, 2] y)",
                         "y = GatherElements <axis = 1> (x, ids)", "^x$");
    c.fixed["ids"] = Int64s({2, 2}, {0, 2, 1, 1});
    RunGradCheck(c);
  }
  SECTION("GatherND") {
    GradCheck c = Graph1("(double[3, 4] x, int64[2, 1] ids) => (double[2, 4] y)", "y = GatherND(x, ids)", "^x$");
    c.fixed["ids"] = Int64s({2, 1}, {2, 0});
    RunGradCheck(c);
  }
}

TEST_CASE("grad check: Expand / Tile / Trilu / Pad", "[grad][gradcheck]") {
  SECTION("Expand") {
    RunGradCheck(Graph1("(double[3, 1] x) => (double[2, 3, 4] y)",
                        "s = Constant <value = int64[3] {2, 3, 4}> ()\n y = Expand(x, s)", "^x$"));
  }
  SECTION("Tile") {
    RunGradCheck(Graph1("(double[2, 3] x) => (double[4, 9] y)",
                        "r = Constant <value = int64[2] {2, 3}> ()\n y = Tile(x, r)", "^x$"));
  }
  SECTION("Trilu") {
    auto r = RunGradCheck(Graph1("(double[3, 4] x) => (double[3, 4] y)",
                                 "k = Constant <value = int64 {1}> ()\n t = Trilu <upper = 0> (x, k)\n y = Exp(t)",
                                 "^x$"));
    CHECK(CountOps(r, "Trilu") == 2);
  }
  SECTION("Pad") {
    RunGradCheck(Graph1("(double[2, 3] x) => (double[3, 6] y)",
                        "p = Constant <value = int64[4] {1, 2, 0, 1}> ()\n y = Pad(x, p)", "^x$"));
  }
}

}  // namespace
}  // namespace memopt
