// ResizeGrad (resize_grad_cpu.cc) by hand and Resize's gradient against finite differences, over
// the modes and coordinate transformations exporters write.
#include "grad/grad_check_util.h"

namespace memopt {
namespace {

using testing::CountOps;
using testing::GradCheck;
using testing::RunGradCheck;

// [a, b] up-sampled x2, linear, half_pixel: [a, .75a + .25b, .25a + .75b, b]. dY = [1, 2, 3, 4]
// gives dA = 1 + .75 * 2 + .25 * 3 = 3.25 and dB = .25 * 2 + .75 * 3 + 4 = 6.75.
TEST_CASE("ResizeGrad: linear x2 by hand", "[grad][resize]") {
  auto model = LoadModelFromText(R"(
<ir_version: 8, opset_import: ["" : 17, "com.microsoft" : 1]>
g (float[1, 1, 1, 4] dy, float[1, 1, 1, 2] x) => (float[1, 1, 1, 2] dx) {
  scales = Constant <value = float[4] {1, 1, 1, 2}> ()
  dx = com.microsoft.ResizeGrad <mode = "linear"> (dy, x, , scales)
}
)");
  INFO(model.status().message());
  REQUIRE(model.ok());
  Tensor dy(DataType::kFloat, {1, 1, 1, 4}), x(DataType::kFloat, {1, 1, 1, 2});
  for (int64_t i = 0; i < 4; ++i) dy.SetFromDouble(i, static_cast<double>(i + 1));
  auto run = Execute(*model, {{"dy", dy}, {"x", x}});
  INFO(run.status().message());
  REQUIRE(run.ok());
  CHECK(run->outputs.at("dx").GetAsDouble(0) == 3.25);
  CHECK(run->outputs.at("dx").GetAsDouble(1) == 6.75);
}

TEST_CASE("ResizeGrad: dY of the wrong shape is an error naming the node", "[grad][resize]") {
  auto model = LoadModelFromText(R"(
<ir_version: 8, opset_import: ["" : 17, "com.microsoft" : 1]>
g (float[1, 1, 1, 3] dy, float[1, 1, 1, 2] x) => (float[1, 1, 1, 2] dx) {
  scales = Constant <value = float[4] {1, 1, 1, 2}> ()
  dx = com.microsoft.ResizeGrad <mode = "nearest"> (dy, x, , scales)
}
)");
  REQUIRE(model.ok());
  auto run = Execute(*model, {{"dy", Tensor(DataType::kFloat, {1, 1, 1, 3})}, {"x", Tensor(DataType::kFloat, {1, 1, 1, 2})}});
  REQUIRE_FALSE(run.ok());
  CHECK(run.status().message().find("does not have the shape the forward Resize makes, [1, 1, 1, 4]") != std::string::npos);
}

GradCheck ResizeCase(const std::string& x, const std::string& y, const std::string& scales_or_sizes, bool sizes,
                     const std::string& attrs) {
  GradCheck c;
  const std::string input = sizes ? "r = Constant <value = float[0] {}> ()\n s = Constant <value = int64[4] {" +
                                        scales_or_sizes + "}> ()\n t = Resize <" + attrs + "> (x, r, , s)"
                                  : "s = Constant <value = float[4] {" + scales_or_sizes + "}> ()\n t = Resize <" +
                                        attrs + "> (x, , s)";
  c.text = "<ir_version: 8, opset_import: [\"\" : 18]>\n g (double" + x + " x) => (double" + y + " y) {\n " + input +
           "\n y = Sin(t)\n }";
  c.options.trainable = "^x$";
  return c;
}

TEST_CASE("grad check: Resize", "[grad][gradcheck][resize]") {
  SECTION("nearest x2, asymmetric floor (PyTorch's nearest)") {
    auto r = RunGradCheck(ResizeCase("[1, 2, 3, 3]", "[1, 2, 6, 6]", "1, 1, 2, 2", false,
                                     "mode = \"nearest\", coordinate_transformation_mode = \"asymmetric\", "
                                     "nearest_mode = \"floor\""));
    CHECK(CountOps(r, "ResizeGrad") == 1);
  }
  SECTION("bilinear x2, half_pixel (PyTorch's align_corners=False)") {
    RunGradCheck(ResizeCase("[2, 1, 3, 4]", "[2, 1, 6, 8]", "1, 1, 2, 2", false, "mode = \"linear\""));
  }
  SECTION("bilinear to sizes, align_corners") {
    RunGradCheck(ResizeCase("[1, 1, 3, 4]", "[1, 1, 5, 7]", "1, 1, 5, 7", true,
                            "mode = \"linear\", coordinate_transformation_mode = \"align_corners\""));
  }
  SECTION("cubic, pytorch_half_pixel, down-sampling with antialias") {
    RunGradCheck(ResizeCase("[1, 1, 6, 6]", "[1, 1, 3, 4]", "1, 1, 3, 4", true,
                            "mode = \"cubic\", coordinate_transformation_mode = \"pytorch_half_pixel\", antialias = 1"));
  }
  SECTION("cubic with exclude_outside") {
    RunGradCheck(ResizeCase("[1, 1, 4, 4]", "[1, 1, 7, 5]", "1, 1, 7, 5", true,
                            "mode = \"cubic\", exclude_outside = 1"));
  }
  SECTION("the channel axis resized too: the batch's slices only") {
    RunGradCheck(ResizeCase("[2, 3, 2, 2]", "[2, 5, 2, 3]", "2, 5, 2, 3", true, "mode = \"linear\""));
  }
  SECTION("the first axis resized: one slice, the whole tensor") {
    RunGradCheck(ResizeCase("[2, 2, 1, 3]", "[3, 2, 1, 3]", "3, 2, 1, 3", true,
                            "mode = \"linear\", coordinate_transformation_mode = \"align_corners\""));
  }
  SECTION("tf_crop_and_resize: extrapolated outputs get no gradient") {
    GradCheck c;
    c.text = R"(
<ir_version: 8, opset_import: ["" : 18]>
g (double[1, 1, 4, 4] x) => (double[1, 1, 3, 3] y) {
  roi = Constant <value = float[8] {0, 0, -0.2, 0.1, 1, 1, 0.9, 1.3}> ()
  s = Constant <value = int64[4] {1, 1, 3, 3}> ()
  t = Resize <mode = "linear", coordinate_transformation_mode = "tf_crop_and_resize", extrapolation_value = 5.0> (x, roi, , s)
  y = Sin(t)
}
)";
    c.options.trainable = "^x$";
    RunGradCheck(c);
  }
}

TEST_CASE("Resize of opset 10 has no gradient, with a hint", "[grad][resize]") {
  auto model = LoadModelFromText(R"(
<ir_version: 5, opset_import: ["" : 10]>
g (float[1, 1, 2, 2] x) => (float[1, 1, 4, 4] y) {
  s = Constant <value = float[4] {1, 1, 2, 2}> ()
  y = Resize(x, s)
}
)");
  REQUIRE(model.ok());
  GradOptions options;
  options.trainable = "^x$";
  auto result = BuildGradientGraph(*model, options);
  REQUIRE_FALSE(result.ok());
  CHECK(result.status().message().find("export with opset 11 or later") != std::string::npos);
}

}  // namespace
}  // namespace memopt
