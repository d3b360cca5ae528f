// TopK's gradient (index_gradients.cc: GatherElementsGrad of the values' gradient at the indices)
// against finite differences.
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

}  // namespace
}  // namespace memopt
