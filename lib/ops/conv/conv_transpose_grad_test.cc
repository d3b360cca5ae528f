// ConvTranspose's gradient (conv_gradients.cc: Conv for dX, ConvGrad with image and gradient
// swapped for dW, ReduceSum for dB) against finite differences, over the attributes that change
// the geometry.
#include "grad/grad_check_util.h"

namespace memopt {
namespace {

using testing::CountOps;
using testing::GradCheck;
using testing::RunGradCheck;

GradCheck ConvTransposeCase(const std::string& x, const std::string& w, const std::string& y, const std::string& attrs,
                            bool bias) {
  GradCheck c;
  c.text = "<ir_version: 8, opset_import: [\"\" : 17]>\n g (double" + x + " x, double" + w + " w" +
           (bias ? ", double[" + std::string("4") + "] b" : std::string()) + ") => (double" + y + " y) {\n" +
           " t = ConvTranspose <" + attrs + "> (x, w" + (bias ? ", b" : "") + ")\n y = Tanh(t)\n }";
  c.options.trainable = "^(x|w|b)$";
  return c;
}

TEST_CASE("grad check: ConvTranspose", "[grad][gradcheck][conv]") {
  SECTION("2-D, stride 2 (U-Net's up-sampling), bias") {
    auto r = RunGradCheck(ConvTransposeCase("[2, 3, 3, 3]", "[3, 4, 2, 2]", "[2, 4, 6, 6]", "strides = [2, 2]", true));
    CHECK(CountOps(r, "ConvGrad") == 1);
    CHECK(CountOps(r, "Conv") == 1);
  }
  SECTION("pads, dilations, output_padding") {
    RunGradCheck(ConvTransposeCase("[1, 3, 4, 3]", "[3, 4, 3, 3]", "[1, 4, 10, 7]",
                                   "strides = [2, 2], pads = [1, 0, 1, 1], dilations = [2, 1], output_padding = [1, 1]",
                                   true));
  }
  SECTION("groups") {
    RunGradCheck(ConvTransposeCase("[2, 4, 3]", "[4, 2, 3]", "[2, 4, 7]", "group = 2, strides = [2]", true));
  }
  SECTION("output_shape, auto_pad SAME_UPPER, no bias") {
    RunGradCheck(ConvTransposeCase("[1, 2, 3, 3]", "[2, 4, 3, 3]", "[1, 4, 6, 6]",
                                   "strides = [2, 2], auto_pad = \"SAME_UPPER\"", false));
    RunGradCheck(ConvTransposeCase("[1, 2, 3, 3]", "[2, 4, 3, 3]", "[1, 4, 7, 6]",
                                   "strides = [2, 2], output_shape = [7, 6]", false));
  }
  SECTION("3-D") {
    RunGradCheck(ConvTransposeCase("[1, 2, 2, 2, 2]", "[2, 4, 2, 2, 2]", "[1, 4, 4, 4, 4]", "strides = [2, 2, 2]", true));
  }
}

}  // namespace
}  // namespace memopt
