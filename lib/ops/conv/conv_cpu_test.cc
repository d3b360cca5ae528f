// Hand-computed Conv cases the ONNX node tests do not cover: groups with bias, dilation, the
// 1x1 direct path and float16.
#include "helpers/math_test_util.h"

namespace memopt::math::testing {
namespace {

TEST_CASE("Conv with two groups and a bias", "[exec][kernels][math]") {
  // Channel 0 [1,2,3] * [1,1] = [3,5]; channel 1 [4,5,6] * [1,-1] = [-1,-1], + bias 10.
  ExpectModel(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[1,2,1,3] x, float[2,1,1,2] w, float[2] b) => (float[1,2,1,2] y) { y = Conv <group: int = 2> (x, w, b) })",
              {{"x", F({1, 2, 1, 3}, {1, 2, 3, 4, 5, 6})},
               {"w", F({2, 1, 1, 2}, {1, 1, 1, -1})},
               {"b", F({2}, {0, 10})}},
              {{"y", F({1, 2, 1, 2}, {3, 5, 9, 9})}});
}

TEST_CASE("Conv 1-D with dilation 2", "[exec][kernels][math]") {
  // Taps at i and i+2: [1+3, 2+4, 3+5].
  ExpectModel(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[1,1,5] x, float[1,1,2] w) => (float[1,1,3] y) { y = Conv <dilations: ints = [2]> (x, w) })",
              {{"x", F({1, 1, 5}, {1, 2, 3, 4, 5})}, {"w", F({1, 1, 2}, {1, 1})}}, {{"y", F({1, 1, 3}, {4, 6, 8})}});
}

TEST_CASE("Conv 1x1 reads the image directly, also in float16", "[exec][kernels][math]") {
  // y = x0 + 2 * x1 per pixel.
  ExpectModel(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float16[1,2,1,2] x, float16[1,2,1,1] w) => (float16[1,1,1,2] y) { y = Conv (x, w) })",
              {{"x", Make(DataType::kFloat16, {1, 2, 1, 2}, {1, 2, 3, 4})},
               {"w", Make(DataType::kFloat16, {1, 2, 1, 1}, {1, 2})}},
              {{"y", Make(DataType::kFloat16, {1, 1, 1, 2}, {7, 10})}});
}

}  // namespace
}  // namespace memopt::math::testing
