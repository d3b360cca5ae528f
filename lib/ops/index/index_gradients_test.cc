// TopK's and the scatters' gradients (index_gradients.cc) against finite differences.
#include "grad/grad_check_util.h"

namespace memopt {
namespace {

using testing::CountOps;
using testing::GradCheck;
using testing::RunGradCheck;

GradCheck TopKCase(const std::string& x, const std::string& y, const std::string& attrs, int64_t k) {
  GradCheck c;
  c.text = "<ir_version: 8, opset_import: [\"\" : 17]>\n g (double" + x + " x) => (double" + y + " y) {\n" +
           " k = Constant <value = int64[1] {" + std::to_string(k) + "}> ()\n v, i = TopK <" + attrs +
           "> (x, k)\n y = Sin(v)\n }";
  c.options.trainable = "^x$";
  return c;
}

TEST_CASE("grad check: TopK", "[grad][gradcheck][topk]") {
  SECTION("last axis, largest (a MoE router)") {
    auto r = RunGradCheck(TopKCase("[4, 5]", "[4, 2]", "axis = -1", 2));
    CHECK(CountOps(r, "GatherElementsGrad") == 1);
  }
  SECTION("axis 0, smallest, unsorted") {
    RunGradCheck(TopKCase("[5, 3]", "[3, 3]", "axis = 0, largest = 0, sorted = 0", 3));
  }
}

TEST_CASE("grad check: ScatterElements and ScatterND", "[grad][gradcheck][scatter]") {
  auto scatter = [](const std::string& body, const std::string& signature) {
    GradCheck c;
    c.text = "<ir_version: 8, opset_import: [\"\" : 18]>\n g " + signature + " {\n" + body + "\n y = Sin(s)\n }";
    c.options.trainable = "^(d|u)$";
    return c;
  };
  SECTION("ScatterElements, axis 1, unique indices (index_add_ as TorchScript writes it)") {
    auto r = RunGradCheck(scatter(" i = Constant <value = int64[2, 2] {2, 0, 1, 3}> ()\n"
                                  " s = ScatterElements <axis = 1> (d, i, u)",
                                  "(double[2, 4] d, double[2, 2] u) => (double[2, 4] y)"));
    CHECK(CountOps(r, "GatherElements") == 1);
  }
  SECTION("ScatterElements with reduction add, repeated indices") {
    RunGradCheck(scatter(" i = Constant <value = int64[3, 2] {0, 1, 0, 1, 2, 0}> ()\n"
                         " s = ScatterElements <axis = 0, reduction = \"add\"> (d, i, u)",
                         "(double[3, 2] d, double[3, 2] u) => (double[3, 2] y)"));
  }
  SECTION("ScatterND of rows") {
    auto r = RunGradCheck(scatter(" i = Constant <value = int64[2, 1] {2, 0}> ()\n s = ScatterND(d, i, u)",
                                  "(double[3, 2] d, double[2, 2] u) => (double[3, 2] y)"));
    CHECK(CountOps(r, "GatherND") == 1);
  }
}

}  // namespace
}  // namespace memopt
