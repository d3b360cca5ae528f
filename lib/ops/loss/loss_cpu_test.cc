// Tests of the loss kernels: com.microsoft SoftmaxCrossEntropyLossInternal and
// NegativeLogLikelihoodLossInternal against the ONNX loss ops in onnxruntime.
// Expected arrays come from onnxruntime 1.31.1 (CPU) on small random inputs (rounded to 2 decimals);
// where onnxruntime has no CPU kernel for the op, from an equivalent standard-op graph run there
// (named per section). Regenerate with the script described in the file's last comment.
#include "helpers/math_test_util.h"

namespace memopt::math::testing {
namespace {

TEST_CASE("internal loss ops match the ONNX losses in onnxruntime", "[exec][kernels][math]") {
  SECTION("SoftmaxCrossEntropyLossInternal mean, weights, ignore_index input") {
    // reference: ONNX SoftmaxCrossEntropyLoss-13 in onnxruntime
    ExpectModel(R"(<ir_version: 8, opset_import: ["" : 13, "com.microsoft" : 1]>
g (float[3,4,2] scores, int64[3,2] labels, float[4] weights, int64[] ii)
  => (float[] loss, float[3,4,2] log_prob) {
  loss, log_prob = com.microsoft.SoftmaxCrossEntropyLossInternal
      <reduction: string = "mean"> (scores, labels, weights, ii)
})",
        {{"scores", F({3, 4, 2}, {0.5, -0.140000001, 0.649999976, 1.51999998, -0.230000004, -0.230000004, 1.58000004,
          0.769999981, -0.469999999, 0.540000021, -0.460000008, -0.469999999, 0.239999995,
          -1.90999997, -1.72000003, -0.560000002, -1.00999999, 0.310000002, -0.910000026,
          -1.40999997, 1.47000003, -0.230000004, 0.0700000003, -1.41999996})},
         {"labels", I64({3, 2}, {0, 3, -1, 2, 1, -1})},
         {"weights", F({4}, {0.540000021, 0.109999999, 1.14999998, 0.379999995})},
         {"ii", I64({}, {-1})}},
        {{"loss", F({}, {2.39839625})},
         {"log_prob", F({3, 4, 2}, {-1.72069716, -2.26774144, -1.57069707, -0.607741535, -2.45069718, -2.35774159,
          -0.640697062, -1.35774159, -1.46569371, -0.57851249, -1.45569372, -1.58851242,
          -0.755693674, -3.02851248, -2.71569371, -1.67851257, -2.83269048, -0.662223339,
          -2.73269057, -2.38222337, -0.352690488, -1.2022233, -1.75269043, -2.39222336})}},
        1e-5, 1e-6);
  }
  SECTION("SoftmaxCrossEntropyLossInternal sum, weights, ignore_index input") {
    // reference: ONNX SoftmaxCrossEntropyLoss-13 in onnxruntime
    ExpectModel(R"(<ir_version: 8, opset_import: ["" : 13, "com.microsoft" : 1]>
g (float[3,4,2] scores, int64[3,2] labels, float[4] weights, int64[] ii)
  => (float[] loss, float[3,4,2] log_prob) {
  loss, log_prob = com.microsoft.SoftmaxCrossEntropyLossInternal
      <reduction: string = "sum"> (scores, labels, weights, ii)
})",
        {{"scores", F({3, 4, 2}, {0.5, -0.140000001, 0.649999976, 1.51999998, -0.230000004, -0.230000004, 1.58000004,
          0.769999981, -0.469999999, 0.540000021, -0.460000008, -0.469999999, 0.239999995,
          -1.90999997, -1.72000003, -0.560000002, -1.00999999, 0.310000002, -0.910000026,
          -1.40999997, 1.47000003, -0.230000004, 0.0700000003, -1.41999996})},
         {"labels", I64({3, 2}, {0, 3, -1, 2, 1, -1})},
         {"weights", F({4}, {0.540000021, 0.109999999, 1.14999998, 0.379999995})},
         {"ii", I64({}, {-1})}},
        {{"loss", F({}, {5.22850323})},
         {"log_prob", F({3, 4, 2}, {-1.72069716, -2.26774144, -1.57069707, -0.607741535, -2.45069718, -2.35774159,
          -0.640697062, -1.35774159, -1.46569371, -0.57851249, -1.45569372, -1.58851242,
          -0.755693674, -3.02851248, -2.71569371, -1.67851257, -2.83269048, -0.662223339,
          -2.73269057, -2.38222337, -0.352690488, -1.2022233, -1.75269043, -2.39222336})}},
        1e-5, 1e-6);
  }
  SECTION("SoftmaxCrossEntropyLossInternal none, weights, ignore_index input") {
    // reference: ONNX SoftmaxCrossEntropyLoss-13 in onnxruntime
    ExpectModel(R"(<ir_version: 8, opset_import: ["" : 13, "com.microsoft" : 1]>
g (float[3,4,2] scores, int64[3,2] labels, float[4] weights, int64[] ii)
  => (float[3,2] loss, float[3,4,2] log_prob) {
  loss, log_prob = com.microsoft.SoftmaxCrossEntropyLossInternal
      <reduction: string = "none"> (scores, labels, weights, ii)
})",
        {{"scores", F({3, 4, 2}, {0.5, -0.140000001, 0.649999976, 1.51999998, -0.230000004, -0.230000004, 1.58000004,
          0.769999981, -0.469999999, 0.540000021, -0.460000008, -0.469999999, 0.239999995,
          -1.90999997, -1.72000003, -0.560000002, -1.00999999, 0.310000002, -0.910000026,
          -1.40999997, 1.47000003, -0.230000004, 0.0700000003, -1.41999996})},
         {"labels", I64({3, 2}, {0, 3, -1, 2, 1, -1})},
         {"weights", F({4}, {0.540000021, 0.109999999, 1.14999998, 0.379999995})},
         {"ii", I64({}, {-1})}},
        {{"loss", F({3, 2}, {0.929176509, 0.515941799, -0, 3.48278928, 0.300595969, -0})},
         {"log_prob", F({3, 4, 2}, {-1.72069716, -2.26774144, -1.57069707, -0.607741535, -2.45069718, -2.35774159,
          -0.640697062, -1.35774159, -1.46569371, -0.57851249, -1.45569372, -1.58851242,
          -0.755693674, -3.02851248, -2.71569371, -1.67851257, -2.83269048, -0.662223339,
          -2.73269057, -2.38222337, -0.352690488, -1.2022233, -1.75269043, -2.39222336})}},
        1e-5, 1e-6);
  }
  SECTION("NegativeLogLikelihoodLossInternal mean") {
    // reference: ONNX NegativeLogLikelihoodLoss-13 in onnxruntime
    ExpectModel(R"(<ir_version: 8, opset_import: ["" : 13, "com.microsoft" : 1]>
g (float[3,4,2] input, int64[3,2] target, float[4] weight, int64[] ii)
  => (float[] loss) {
  loss = com.microsoft.NegativeLogLikelihoodLossInternal
      <reduction: string = "mean"> (input, target, weight, ii)
})",
        {{"input", F({3, 4, 2}, {-1.72069716, -2.26774144, -1.57069707, -0.607741535, -2.45069718, -2.35774159,
          -0.640697062, -1.35774159, -1.46569371, -0.57851249, -1.45569372, -1.58851242,
          -0.755693674, -3.02851248, -2.71569371, -1.67851257, -2.83269048, -0.662223339,
          -2.73269057, -2.38222337, -0.352690488, -1.2022233, -1.75269043, -2.39222336})},
         {"target", I64({3, 2}, {0, 3, -1, 2, 1, -1})},
         {"weight", F({4}, {0.540000021, 0.109999999, 1.14999998, 0.379999995})},
         {"ii", I64({}, {-1})}},
        {{"loss", F({}, {2.39839625})}},
        1e-5, 1e-6);
  }
  SECTION("NegativeLogLikelihoodLossInternal none") {
    // reference: ONNX NegativeLogLikelihoodLoss-13 in onnxruntime
    ExpectModel(R"(<ir_version: 8, opset_import: ["" : 13, "com.microsoft" : 1]>
g (float[3,4,2] input, int64[3,2] target, float[4] weight, int64[] ii)
  => (float[3,2] loss) {
  loss = com.microsoft.NegativeLogLikelihoodLossInternal
      <reduction: string = "none"> (input, target, weight, ii)
})",
        {{"input", F({3, 4, 2}, {-1.72069716, -2.26774144, -1.57069707, -0.607741535, -2.45069718, -2.35774159,
          -0.640697062, -1.35774159, -1.46569371, -0.57851249, -1.45569372, -1.58851242,
          -0.755693674, -3.02851248, -2.71569371, -1.67851257, -2.83269048, -0.662223339,
          -2.73269057, -2.38222337, -0.352690488, -1.2022233, -1.75269043, -2.39222336})},
         {"target", I64({3, 2}, {0, 3, -1, 2, 1, -1})},
         {"weight", F({4}, {0.540000021, 0.109999999, 1.14999998, 0.379999995})},
         {"ii", I64({}, {-1})}},
        {{"loss", F({3, 2}, {0.929176509, 0.515941799, -0, 3.48278928, 0.300595969, -0})}},
        1e-5, 1e-6);
  }

}

TEST_CASE("SoftmaxCrossEntropyLossInternal honours output_type", "[exec][kernels][math]") {
  // Two equal logits: log_prob = -ln 2 for both classes, loss = ln 2; outputs in float16.
  ExpectModel(R"(<ir_version: 8, opset_import: ["" : 13, "com.microsoft" : 1]>
g (float[1,2] s, int64[1] l) => (float16 loss, float16[1,2] lp) {
  loss, lp = com.microsoft.SoftmaxCrossEntropyLossInternal <output_type: int = 10> (s, l)
})",
              {{"s", F({1, 2}, {0, 0})}, {"l", I64({1}, {1})}},
              {{"loss", Make(DataType::kFloat16, {}, {std::log(2.0)})},
               {"lp", Make(DataType::kFloat16, {1, 2}, {-std::log(2.0), -std::log(2.0)})}},
              1e-3, 0);
}

TEST_CASE("loss kernels reject labels outside 0..C-1", "[exec][kernels][math]") {
  auto model = LoadModelFromText(R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[1,2] s, int64[1] l) => (float loss) { loss = SoftmaxCrossEntropyLoss (s, l) })");
  REQUIRE(model.ok());
  RunOptions options;
  options.registry = &MathRegistry();
  auto result = Execute(*model, {{"s", F({1, 2}, {0, 0})}, {"l", I64({1}, {5})}}, options);
  REQUIRE_FALSE(result.ok());
  CHECK(result.status().message().find("label 5") != std::string::npos);
}

}  // namespace
}  // namespace memopt::math::testing

// Regenerating the expected arrays: build a one-node model with onnx.helper for the same inputs,
// run it with onnxruntime.InferenceSession(providers=["CPUExecutionProvider"]) and print the
// outputs with "%.9g" (inputs: numpy RandomState(42).randn rounded to 2 decimals).
