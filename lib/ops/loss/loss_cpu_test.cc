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

TEST_CASE("SoftmaxCrossEntropyLossInternal in float16: the float results rounded, rows and strided blocks",
          "[exec][kernels][math]") {
  // Scores exact in float16, so the float16 run computes what the float32 run does; [N, C, D]
  // with C x D past one block (blocks of 65536 / C positions).
  for (const std::vector<int64_t>& shape : {std::vector<int64_t>{6, 900}, std::vector<int64_t>{2, 300, 260}}) {
    const int64_t n = shape[0], c = shape[1], d = shape.size() > 2 ? shape[2] : 1;
    std::vector<double> s(static_cast<size_t>(n * c * d)), labels(static_cast<size_t>(n * d));
    for (size_t i = 0; i < s.size(); ++i) s[i] = static_cast<double>(static_cast<int>(i * 37 % 201) - 100) / 16.0;
    for (size_t i = 0; i < labels.size(); ++i) labels[i] = static_cast<double>(i * 11 % static_cast<size_t>(c));
    std::vector<int64_t> label_shape = {n};
    if (d > 1) label_shape.push_back(d);
    auto run = [&](const char* type, DataType t) {
      std::string dims = std::to_string(n) + "," + std::to_string(c) + (d > 1 ? "," + std::to_string(d) : "");
      std::string ldims = std::to_string(n) + (d > 1 ? "," + std::to_string(d) : "");
      return RunText(std::string(R"(<ir_version: 8, opset_import: ["" : 13, "com.microsoft" : 1]>
g ()") + type + "[" + dims + "] s, int64[" + ldims + "] l) => (" + type + " loss, " + type + "[" + dims + R"(] lp) {
  loss, lp = com.microsoft.SoftmaxCrossEntropyLossInternal <reduction: string = "sum"> (s, l)
})",
                     {{"s", Make(t, shape, s)}, {"l", I64(label_shape, labels)}});
    };
    const auto f = run("float", DataType::kFloat);
    const auto h = run("float16", DataType::kFloat16);
    const Tensor& lpf = f.at("lp");
    const Tensor& lph = h.at("lp");
    // float32 against the definition: lp = s - log sum_k exp(s[b, k, j]), in double.
    double worst = 0;
    for (int64_t b = 0; b < n; ++b)
      for (int64_t j = 0; j < d; ++j) {
        double sum = 0;
        for (int64_t k = 0; k < c; ++k) sum += std::exp(s[static_cast<size_t>((b * c + k) * d + j)]);
        for (int64_t k = 0; k < c; ++k) {
          const size_t i = static_cast<size_t>((b * c + k) * d + j);
          worst = std::max(worst, std::fabs(lpf.data<float>()[i] - (s[i] - std::log(sum))));
        }
      }
    CHECK(worst < 1e-5);
    REQUIRE(lph.dtype() == DataType::kFloat16);
    int64_t differ = 0;
    for (int64_t i = 0; i < lpf.numel(); ++i) differ += lph.data<uint16_t>()[i] != FloatToFloat16(lpf.data<float>()[i]);
    CHECK(differ == 0);
    CHECK(h.at("loss").data<uint16_t>()[0] == FloatToFloat16(f.at("loss").data<float>()[0]));
  }
}

}  // namespace
}  // namespace memopt::math::testing

// Regenerating the expected arrays: build a one-node model with onnx.helper for the same inputs,
// run it with onnxruntime.InferenceSession(providers=["CPUExecutionProvider"]) and print the
// outputs with "%.9g" (inputs: numpy RandomState(42).randn rounded to 2 decimals).
