// Hand-computed cases for the normalisation kernels in norm.cc that the ONNX node tests do not
// reach: legacy BatchNormalization (spatial=0), training statistics, com.microsoft
// BatchNormInternal, per-group GroupNormalization.
#include "helpers/math_test_util.h"

namespace memopt::math::testing {
namespace {

TEST_CASE("BatchNormalization opset 7 with spatial=0 normalises each feature", "[exec][kernels][math]") {
  // Features (c, h) = (0, 0) and (0, 1): (3 - 1) / sqrt(4) * 1 + 0 = 1, (5 - 1) / sqrt(16) * 2 + 1 = 3.
  ExpectModel(R"(<ir_version: 3, opset_import: ["" : 7]>
g (float[1,1,2] x, float[1,2] s, float[1,2] b, float[1,2] m, float[1,2] v) => (float[1,1,2] y) {
  y = BatchNormalization <spatial: int = 0, epsilon: float = 0.0> (x, s, b, m, v)
})",
              {{"x", F({1, 1, 2}, {3, 5})},
               {"s", F({1, 2}, {1, 2})},
               {"b", F({1, 2}, {0, 1})},
               {"m", F({1, 2}, {1, 1})},
               {"v", F({1, 2}, {4, 16})}},
              {{"y", F({1, 1, 2}, {1, 3})}});
}

TEST_CASE("BatchNormalization training mode uses batch statistics", "[exec][kernels][math]") {
  // One channel, values 1 and 3: mean 2, population variance 1 -> y = [-1, 1];
  // running_mean = 0.9 * 0 + 0.1 * 2, running_var = 0.9 * 1 + 0.1 * 1.
  ExpectModel(R"(<ir_version: 8, opset_import: ["" : 15]>
g (float[2,1,1] x, float[1] s, float[1] b, float[1] m, float[1] v) => (float[2,1,1] y, float[1] rm, float[1] rv) {
  y, rm, rv = BatchNormalization <training_mode: int = 1, epsilon: float = 0.0> (x, s, b, m, v)
})",
              {{"x", F({2, 1, 1}, {1, 3})},
               {"s", F({1}, {1})},
               {"b", F({1}, {0})},
               {"m", F({1}, {0})},
               {"v", F({1}, {1})}},
              {{"y", F({2, 1, 1}, {-1, 1})}, {"rm", F({1}, {0.2})}, {"rv", F({1}, {1.0})}});
}

TEST_CASE("BatchNormInternal also returns the saved mean and inverse std", "[exec][kernels][math]") {
  // Values 1 and 5: mean 3, population variance 4 -> y = [-1, 1], saved_inv_std = 1/2;
  // running_mean = 0.1 * 3, running_var = 0.9 * 1 + 0.1 * 4.
  ExpectModel(R"(<ir_version: 8, opset_import: ["" : 15, "com.microsoft" : 1]>
g (float[2,1,1] x, float[1] s, float[1] b, float[1] m, float[1] v)
  => (float[2,1,1] y, float[1] rm, float[1] rv, float[1] sm, float[1] si) {
  y, rm, rv, sm, si = com.microsoft.BatchNormInternal <epsilon: float = 0.0> (x, s, b, m, v)
})",
              {{"x", F({2, 1, 1}, {1, 5})},
               {"s", F({1}, {1})},
               {"b", F({1}, {0})},
               {"m", F({1}, {0})},
               {"v", F({1}, {1})}},
              {{"y", F({2, 1, 1}, {-1, 1})},
               {"rm", F({1}, {0.3})},
               {"rv", F({1}, {1.3})},
               {"sm", F({1}, {3})},
               {"si", F({1}, {0.5})}});
}

TEST_CASE("GroupNormalization opset 18 takes one scale per group", "[exec][kernels][math]") {
  // One group over both channels: mean 2, variance 1 -> [-1, 1] * 2 + 0.5.
  ExpectModel(R"(<ir_version: 8, opset_import: ["" : 18]>
g (float[1,2,1] x, float[1] s, float[1] b) => (float[1,2,1] y) {
  y = GroupNormalization <num_groups: int = 1, epsilon: float = 0.0> (x, s, b)
})",
              {{"x", F({1, 2, 1}, {1, 3})}, {"s", F({1}, {2})}, {"b", F({1}, {0.5})}},
              {{"y", F({1, 2, 1}, {-1.5, 2.5})}});
}

}  // namespace
}  // namespace memopt::math::testing
