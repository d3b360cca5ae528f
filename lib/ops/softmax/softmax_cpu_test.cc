// Tests of the softmax kernels: com.microsoft BiasSoftmax (both broadcast modes) against onnxruntime
// Add + Softmax, and the opset-dependent axis semantics of Softmax/Hardmax.
// Expected arrays come from onnxruntime 1.31.1 (CPU) on small random inputs (rounded to 2 decimals);
// where onnxruntime has no CPU kernel for the op, from an equivalent standard-op graph run there
// (named per section). Regenerate with the script described in the file's last comment.
#include "helpers/math_test_util.h"

namespace memopt::math::testing {
namespace {

TEST_CASE("BiasSoftmax matches Add + Softmax in onnxruntime", "[exec][kernels][math]") {
  SECTION("inner broadcast (mask [B,1,1,S] on scores [B,H,S,S])") {
    // reference: Add + Softmax(axis=-1) in onnxruntime
    ExpectModel(R"(<ir_version: 8, opset_import: ["" : 13, "com.microsoft" : 1]>
g (float[2,2,3,3] data, float[2,1,1,3] bias)
  => (float[2,2,3,3] y) {
  y = com.microsoft.BiasSoftmax <axis: int = 3, is_inner_broadcast: int = 1> (data, bias)
})",
        {{"data", F({2, 2, 3, 3}, {0.5, -0.140000001, 0.649999976, 1.51999998, -0.230000004, -0.230000004, 1.58000004,
          0.769999981, -0.469999999, 0.540000021, -0.460000008, -0.469999999, 0.239999995,
          -1.90999997, -1.72000003, -0.560000002, -1.00999999, 0.310000002, -0.910000026,
          -1.40999997, 1.47000003, -0.230000004, 0.0700000003, -1.41999996, -0.540000021,
          0.109999999, -1.14999998, 0.379999995, -0.600000024, -0.289999992, -0.600000024,
          1.85000002, -0.00999999978, -1.05999994, 0.819999993, -1.22000003})},
         {"bias", F({2, 1, 1, 3}, {0.209999993, -1.96000004, -1.33000004, 0.200000003, 0.74000001, 0.170000002})}},
        {{"y", F({2, 2, 3, 3}, {0.763778389, 0.0459832661, 0.190238312, 0.945988834, 0.0187694523, 0.0352417268,
          0.927307248, 0.0471005626, 0.0255921278, 0.892789185, 0.0375003554, 0.0697104558,
          0.958315849, 0.0127454931, 0.028938625, 0.631109357, 0.045946572, 0.322944105,
          0.0798315331, 0.0830895156, 0.837078989, 0.276885778, 0.641369104, 0.0817450434,
          0.207711309, 0.682763994, 0.109524615, 0.467154026, 0.30086419, 0.231981829,
          0.0441767126, 0.878484309, 0.0773389712, 0.0764946118, 0.860247493, 0.0632578954})}},
        1e-5, 1e-6);
  }
  SECTION("outer broadcast (bias [H,S,S] repeated over B)") {
    // reference: Add + Softmax(axis=-1) in onnxruntime
    ExpectModel(R"(<ir_version: 8, opset_import: ["" : 13, "com.microsoft" : 1]>
g (float[2,2,3,3] data, float[2,3,3] bias)
  => (float[2,2,3,3] y) {
  y = com.microsoft.BiasSoftmax <axis: int = 3, is_inner_broadcast: int = 0> (data, bias)
})",
        {{"data", F({2, 2, 3, 3}, {-0.119999997, -0.300000012, -1.48000002, -0.720000029, -0.460000008, 1.05999994,
          0.340000004, -1.75999999, 0.319999993, -0.389999986, -0.680000007, 0.610000014,
          1.02999997, 0.930000007, -0.839999974, -0.310000002, 0.330000013, 0.980000019,
          -0.479999989, -0.189999998, -1.11000001, -1.20000005, 0.810000002, 1.36000001,
          -0.0700000003, 1, 0.360000014, -0.649999976, 0.360000014, 1.53999996,
          -0.0399999991, 1.55999994, -2.61999989, 0.819999993, 0.0900000036, -0.300000012})},
         {"bias", F({2, 3, 3}, {0.0900000036, -1.99000001, -0.219999999, 0.360000014, 1.48000002, -0.519999981,
          -0.810000002, -0.5, 0.920000017, 0.330000013, -0.529999971, 0.50999999,
          0.100000001, 0.970000029, -0.699999988, -0.330000013, -0.389999986, -1.46000004})}},
        {{"y", F({2, 2, 3, 3}, {0.773635983, 0.0807292908, 0.145634696, 0.134507939, 0.534655869, 0.330836147,
          0.149344638, 0.0249346066, 0.825720787, 0.218769982, 0.0692706257, 0.711959362,
          0.309691608, 0.668861568, 0.0214468352, 0.25255397, 0.451071143, 0.296374857,
          0.642018318, 0.107191473, 0.250790209, 0.0342002697, 0.7822963, 0.183503479,
          0.0732813478, 0.291286111, 0.635432541, 0.0777651742, 0.0903502554, 0.831884503,
          0.0777816996, 0.919570088, 0.00264826929, 0.641336441, 0.291067213, 0.0675963685})}},
        1e-5, 1e-6);
  }
  SECTION("axis 1 softmax over the flattened block [axis..]") {
    // reference: Add + Softmax-11(axis=1) in onnxruntime
    ExpectModel(R"(<ir_version: 8, opset_import: ["" : 13, "com.microsoft" : 1]>
g (float[2,3,4] data, float[3,4] bias)
  => (float[2,3,4] y) {
  y = com.microsoft.BiasSoftmax <axis: int = 1, is_inner_broadcast: int = 0> (data, bias)
})",
        {{"data", F({2, 3, 4}, {0.300000012, 0.25999999, 0.00999999978, -0.230000004, -1.41999996, -0.419999987,
          -0.340000004, -0.800000012, -0.159999996, 0.400000006, 1.88999999, 0.170000002,
          0.25999999, -0.0700000003, -1.91999996, -0.0299999993, 0.0599999987, 2.46000004,
          -0.189999998, 0.300000012, -0.0299999993, -1.16999996, 1.13999999, 0.75})},
         {"bias", F({3, 4}, {0.790000021, -0.910000026, 1.39999998, -1.39999998, 0.790000021, -0.910000026,
          1.39999998, -1.39999998, 0.790000021, -0.910000026, 1.39999998, -1.39999998})}},
        {{"y", F({2, 3, 4}, {0.0721986443, 0.0126723321, 0.0994267464, 0.00475606695, 0.0129283322,
          0.00642001955, 0.0700648353, 0.00268967752, 0.0455778241, 0.014576653, 0.651593626,
          0.0070952191, 0.0944079161, 0.0123991128, 0.0196411144, 0.00790602434, 0.07729467,
          0.155652344, 0.110788725, 0.0109970281, 0.0706420094, 0.0041273064, 0.418896943,
          0.0172467697})}},
        1e-5, 1e-6);
  }

}

TEST_CASE("Softmax axis semantics depend on the opset", "[exec][kernels][math]") {
  // x = [[[0, 0], [0, ln 3]]]: opset 11 (axis 1) normalises the flattened block of 4 values
  // (exp = 1, 1, 1, 3; sum 6); opset 13 (axis -1) normalises each row of 2.
  const double ln3 = std::log(3.0);
  SECTION("opset 11: 2-D view at axis 1") {
    ExpectModel(R"(<ir_version: 7, opset_import: ["" : 11]>
g (float[1,2,2] x) => (float[1,2,2] y) { y = Softmax (x) })",
                {{"x", F({1, 2, 2}, {0, 0, 0, ln3})}}, {{"y", F({1, 2, 2}, {1.0 / 6, 1.0 / 6, 1.0 / 6, 0.5})}});
  }
  SECTION("opset 13: single axis -1") {
    ExpectModel(R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[1,2,2] x) => (float[1,2,2] y) { y = Softmax (x) })",
                {{"x", F({1, 2, 2}, {0, 0, 0, ln3})}}, {{"y", F({1, 2, 2}, {0.5, 0.5, 0.25, 0.75})}});
  }
  SECTION("opset 13 LogSoftmax along axis 1 (strided)") {
    ExpectModel(R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[1,2,2] x) => (float[1,2,2] y) { y = LogSoftmax <axis: int = 1> (x) })",
                {{"x", F({1, 2, 2}, {0, 0, 0, ln3})}},
                {{"y", F({1, 2, 2}, {std::log(0.5), std::log(0.25), std::log(0.5), std::log(0.75)})}});
  }
  SECTION("opset 11 Hardmax marks the first maximum of the flattened block") {
    ExpectModel(R"(<ir_version: 7, opset_import: ["" : 11]>
g (float[1,2,2] x) => (float[1,2,2] y) { y = Hardmax (x) })",
                {{"x", F({1, 2, 2}, {1, 5, 5, 2})}}, {{"y", F({1, 2, 2}, {0, 1, 0, 0})}});
  }
  SECTION("float16 softmax rounds on store") {
    ExpectModel(R"(<ir_version: 8, opset_import: ["" : 13]>
g (float16[1,2] x) => (float16[1,2] y) { y = Softmax (x) })",
                {{"x", Make(DataType::kFloat16, {1, 2}, {0, ln3})}},
                {{"y", Make(DataType::kFloat16, {1, 2}, {0.25, 0.75})}}, 1e-3, 0);
  }
}

TEST_CASE("16-bit Softmax, LogSoftmax, Hardmax and BiasSoftmax: the float results rounded, blocks of rows and strided",
          "[exec][kernels][math]") {
  // Inputs exact in float16 and bfloat16, so the 16-bit runs compute what float32 does. Rows of
  // 700 (23 rows per converted block of 16K values) and axis 1 of [2, 300, 260] (218 positions
  // per strided block).
  struct Case {
    std::string op, attrs;
    std::vector<int64_t> shape;
  };
  const std::vector<Case> cases = {{"Softmax", "", {50, 700}},
                                   {"LogSoftmax", "", {50, 700}},
                                   {"Hardmax", "", {50, 700}},
                                   {"Softmax", "<axis: int = 1>", {2, 300, 260}},
                                   {"LogSoftmax", "<axis: int = 1>", {2, 300, 260}},
                                   {"com.microsoft.BiasSoftmax", "<axis: int = 1, is_inner_broadcast: int = 0>", {50, 700}}};
  for (const Case& c : cases) {
    INFO(c.op << " " << c.attrs);
    std::string dims;
    int64_t numel = 1;
    for (int64_t d : c.shape) {
      dims += (dims.empty() ? "" : ",") + std::to_string(d);
      numel *= d;
    }
    std::vector<double> x(static_cast<size_t>(numel)), bias(700);
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<double>(static_cast<int>(i * 37 % 201) - 100) / 16.0;
    for (size_t i = 0; i < bias.size(); ++i) bias[i] = static_cast<double>(static_cast<int>(i % 9) - 4) / 8.0;
    const bool with_bias = c.op.find("Bias") != std::string::npos;
    auto run = [&](const std::string& type, DataType t) {
      std::string text = R"(<ir_version: 8, opset_import: ["" : 13, "com.microsoft" : 1]>
g ()" + type + "[" + dims + "] x" + (with_bias ? ", " + type + "[700] b" : std::string()) + ") => (" + type + "[" +
                         dims + "] y) { y = " + c.op + " " + c.attrs + (with_bias ? " (x, b) }" : " (x) }");
      std::map<std::string, Tensor> feeds = {{"x", Make(t, c.shape, x)}};
      if (with_bias) feeds.emplace("b", Make(t, {700}, bias));
      return RunText(text, feeds).at("y");
    };
    const Tensor f = run("float", DataType::kFloat);
    for (const auto& [type, t] : {std::pair<std::string, DataType>{"float16", DataType::kFloat16},
                                  std::pair<std::string, DataType>{"bfloat16", DataType::kBfloat16}}) {
      const Tensor h = run(type, t);
      int64_t differ = 0;
      for (int64_t i = 0; i < numel; ++i) {
        const float v = f.data<float>()[i];
        differ += h.data<uint16_t>()[i] != (t == DataType::kFloat16 ? FloatToFloat16(v) : FloatToBfloat16(v));
      }
      CHECK(differ == 0);
    }
  }
}

}  // namespace
}  // namespace memopt::math::testing

// Regenerating the expected arrays: build a one-node model with onnx.helper for the same inputs,
// run it with onnxruntime.InferenceSession(providers=["CPUExecutionProvider"]) and print the
// outputs with "%.9g" (inputs: numpy RandomState(42).randn rounded to 2 decimals).
