// Tests of the LayerNormalization family: contrib LayerNormalization, SimplifiedLayerNormalization and
// com.microsoft Skip(Simplified)LayerNormalization against onnxruntime.
// Expected arrays come from onnxruntime 1.31.1 (CPU) on small random inputs (rounded to 2 decimals);
// where onnxruntime has no CPU kernel for the op, from an equivalent standard-op graph run there
// (named per section). Regenerate with the script described in the file's last comment.
#include "helpers/math_test_util.h"

namespace memopt::math::testing {
namespace {

// The inputs the Skip*LayerNormalization sections share (and their x + skip + bias sum).
const std::vector<double> kX = {0.5,          -0.140000001, 0.649999976,  1.51999998,   -0.230000004, -0.230000004,
                                1.58000004,   0.769999981,  -0.469999999, 0.540000021,  -0.460000008, -0.469999999,
                                0.239999995,  -1.90999997,  -1.72000003,  -0.560000002, -1.00999999,  0.310000002,
                                -0.910000026, -1.40999997,  1.47000003,   -0.230000004, 0.0700000003, -1.41999996};
const std::vector<double> kSkip = {-0.540000021, 0.109999999,  -1.14999998,    0.379999995,  -0.600000024, -0.289999992,
                                   -0.600000024, 1.85000002,   -0.00999999978, -1.05999994,  0.819999993,  -1.22000003,
                                   0.209999993,  -1.96000004,  -1.33000004,    0.200000003,  0.74000001,   0.170000002,
                                   -0.119999997, -0.300000012, -1.48000002,    -0.720000029, -0.460000008, 1.05999994};
const std::vector<double> kGamma = {0.340000004, -1.75999999, 0.319999993, -0.389999986};
const std::vector<double> kBeta = {-0.680000007, 0.610000014, 1.02999997, 0.930000007};
const std::vector<double> kBias = {-0.839999974, -0.310000002, 0.330000013, 0.980000019};
const std::vector<double> kSum = {-0.879999995, -0.340000004, -0.169999987, 2.88000011,   -1.67000008,   -0.829999983,
                                  1.31000006,   3.5999999,    -1.31999993,  -0.829999924, 0.689999998,   -0.710000038,
                                  -0.389999986, -4.17999983,  -2.72000027,  0.620000005,  -1.1099999,    0.170000017,
                                  -0.699999928, -0.730000019, -0.849999964, -1.25999999,  -0.0600000024, 0.620000005};

TEST_CASE("layer normalization kernels match onnxruntime", "[exec][kernels][math]") {
  SECTION("SkipLayerNormalization with beta and bias") {
    // vs onnxruntime
    ExpectModel(
        R"(<ir_version: 8, opset_import: ["" : 17, "com.microsoft" : 1]>
g (float[2,3,4] x, float[2,3,4] skip, float[4] gamma, float[4] beta, float[4] bias)
  => (float[2,3,4] y, float[2,3,1] mean, float[2,3,1] inv_std, float[2,3,4] sum) {
  y, mean, inv_std, sum = com.microsoft.SkipLayerNormalization
      <epsilon: float = 1e-05> (x, skip, gamma, beta, bias)
})",
        {{"x", F({2, 3, 4}, kX)},
         {"skip", F({2, 3, 4}, kSkip)},
         {"gamma", F({4}, kGamma)},
         {"beta", F({4}, kBeta)},
         {"bias", F({4}, kBias)}},
        {{"y", F({2, 3, 4}, {-0.969447613, 1.46233606,  0.912005126,  0.265310526, -1.05812001, 1.84382653,
                             1.14079583,   0.357901752, -1.03370166,  1.28703058,  1.55770922,  1.01740527,
                             -0.450158775, 2.94995117,  0.851778388,  0.457921982, -1.05518746, -2.25161695,
                             0.956647038,  1.04434752,  -0.897154152, 2.73058462,  1.17472339,  0.387390852})},
         {"mean", F({2, 3, 1}, {0.372500032, 0.602499962, -0.542499959, -1.66750002, -0.592499912, -0.387499988})},
         {"inv_std", F({2, 3, 1}, {0.679693699, 0.489380717, 1.3380053, 0.529161334, 2.13235259, 1.38094854})},
         {"sum", F({2, 3, 4}, kSum)}},
        1e-5, 1e-5);
  }
  SECTION("SkipLayerNormalization with skip broadcast over the batch") {
    // vs onnxruntime
    ExpectModel(
        R"(<ir_version: 8, opset_import: ["" : 17, "com.microsoft" : 1]>
g (float[2,3,4] x, float[3,4] skip, float[4] gamma, float[4] beta)
  => (float[2,3,4] y, float[2,3,1] mean, float[2,3,1] inv_std, float[2,3,4] sum) {
  y, mean, inv_std, sum = com.microsoft.SkipLayerNormalization
      <epsilon: float = 1e-05> (x, skip, gamma, beta)
})",
        {{"x", F({2, 3, 4}, kX)},
         {"skip", F({3, 4}, {-0.479999989, -0.189999998, -1.11000001, -1.20000005, 0.810000002, 1.36000001,
                             -0.0700000003, 1, 0.360000014, -0.649999976, 0.360000014, 1.53999996})},
         {"gamma", F({4}, kGamma)},
         {"beta", F({4}, kBeta)}},
        {{"y", F({2, 3, 4}, {-0.53241694, 1.86404598,  0.665710688,  0.377423763, -1.18705916, 1.0720396,
                             1.21767545,  0.474719316, -0.878513217, 1.63759792,  0.849444151, 0.2545349,
                             -0.14270097, 1.29484546,  0.658141911,  0.941355824, -0.75521636, -2.31016397,
                             0.708218873, 1.09863341,  -0.169765413, 2.88816118,  1.04815269,  1.03257298})},
         {"mean", F({2, 3, 1}, {-0.112500012, 1.24750006, 0.1875, -1.73250008, 0.0200000256, 0.375})},
         {"inv_std", F({2, 3, 1}, {3.27598262, 2.23423266, 1.96256316, 1.05882156, 1.005566, 1.03140211})},
         {"sum", F({2, 3, 4}, {0.0200000107, -0.329999983, -0.460000038, 0.319999933,  0.579999983,  1.13,
                               1.50999999,   1.76999998,   -0.109999985, -0.109999955, -0.099999994, 1.06999993,
                               -0.239999995, -2.0999999,   -2.82999992,  -1.75999999,  -0.199999988, 1.67000008,
                               -0.980000019, -0.409999967, 1.83000004,   -0.879999995, 0.430000007,  0.120000005})}},
        1e-5, 1e-5);
  }
  SECTION("SkipSimplifiedLayerNormalization") {
    // vs onnxruntime (mean output is all zeros there too)
    ExpectModel(
        R"(<ir_version: 8, opset_import: ["" : 17, "com.microsoft" : 1]>
g (float[2,3,4] x, float[2,3,4] skip, float[4] gamma, float[4] bias)
  => (float[2,3,4] y, float[2,3,1] mean, float[2,3,1] inv_std, float[2,3,4] sum) {
  y, mean, inv_std, sum = com.microsoft.SkipSimplifiedLayerNormalization
      <epsilon: float = 1e-05> (x, skip, gamma, bias)
})",
        {{"x", F({2, 3, 4}, kX)}, {"skip", F({2, 3, 4}, kSkip)}, {"gamma", F({4}, kGamma)}, {"bias", F({4}, kBias)}},
        {{"y", F({2, 3, 4}, {-0.197143763,  0.394287527,  -0.0358443148, -0.74007982,   -0.266526222,  0.685701787,
                             0.196773142,   -0.659039795, -0.485967904,  1.58177781,    0.239085823,   0.299831837,
                             -0.0526131019, 2.9190352,    -0.345357835,  -0.0959415361, -0.499447137,  -0.395958185,
                             -0.296439201,  0.376768976,  -0.351880819,  2.70010686,    -0.0233775489, -0.294411004})},
         {"mean", F({2, 3, 1}, {0, 0, 0, 0, 0, 0})},
         {"inv_std", F({2, 3, 1}, {0.658902943, 0.469401568, 1.08281624, 0.39678058, 1.32338953, 1.21758068})},
         {"sum", F({2, 3, 4}, kSum)}},
        1e-5, 1e-5);
  }
  SECTION("SimplifiedLayerNormalization") {
    // domain "" v1, vs onnxruntime
    ExpectModel(
        R"(<ir_version: 8, opset_import: ["" : 17, "com.microsoft" : 1]>
g (float[2,3,4] x, float[4] scale)
  => (float[2,3,4] y, float[2,3,1] inv_std) {
  y, inv_std = SimplifiedLayerNormalization <epsilon: float = 1e-05> (x, scale)
})",
        {{"x", F({2, 3, 4}, {-0.0399999991, 1.55999994,  -2.61999989,  0.819999993,  0.0900000036, -0.300000012,
                             0.0900000036,  -1.99000001, -0.219999999, 0.360000014,  1.48000002,   -0.519999981,
                             -0.810000002,  -0.5,        0.920000017,  0.330000013,  -0.529999971, 0.50999999,
                             0.100000001,   0.970000029, -0.699999988, -0.330000013, -0.389999986, -1.46000004})},
         {"scale", F({4}, {0.300000012, 0.25999999, 0.00999999978, -0.230000004})}},
        {{"y", F({2, 3, 4}, {-0.00760009978, 0.256883353,  -0.0165935494, -0.119448237, 0.0267788544,   -0.0773611292,
                             0.000892628392, 0.45395112,   -0.0812582374, 0.11523895,   0.0182215441,   0.147249773,
                             -0.356214643,   -0.190567479, 0.0134863146,  -0.111262098, -0.260346293,   0.217118993,
                             0.00163739827,  -0.365303546, -0.247374028,  -0.101069957, -0.00459408853, 0.395562857})},
         {"inv_std", F({2, 3, 1}, {0.63334161, 0.991809309, 1.23118544, 1.46590376, 1.63739824, 1.17797148})}},
        1e-5, 1e-5);
  }
  SECTION("contrib LayerNormalization (opset 13 import) at axis 1") {
    // vs onnxruntime
    ExpectModel(
        R"(<ir_version: 8, opset_import: ["" : 13, "com.microsoft" : 1]>
g (float[2,3,4] x, float[3,4] scale, float[3,4] bias)
  => (float[2,3,4] y, float[2,1,1] mean, float[2,1,1] inv_std) {
  y, mean, inv_std = LayerNormalization <axis: int = 1, epsilon: float = 1e-05> (x, scale, bias)
})",
        {{"x", F({2, 3, 4}, {-1.41999996,  -0.419999987, -0.340000004, -0.800000012,  -0.159999996,  0.400000006,
                             1.88999999,   0.170000002,  0.25999999,   -0.0700000003, -1.91999996,   -0.0299999993,
                             0.0599999987, 2.46000004,   -0.189999998, 0.300000012,   -0.0299999993, -1.16999996,
                             1.13999999,   0.75,         0.790000021,  -0.910000026,  1.39999998,    -1.39999998})},
         {"scale", F({3, 4}, {0.589999974, 2.19000006, -0.99000001, -0.569999993, 0.100000001, -0.5, -1.54999995,
                              0.0700000003, -1.05999994, 0.469999999, -0.920000017, 1.54999995})},
         {"bias", F({3, 4}, {-0.779999971, -0.319999993, 0.810000002, -1.23000002, 0.230000004, 1.30999994, -1.61000001,
                             0.180000007, 0.25999999, 0.779999971, -1.24000001, -1.32000005})}},
        {{"y", F({2, 3, 4}, {-1.56639469,  -0.839820266, 0.958222747,  -0.857416451, 0.234747216, 0.979520559,
                             -5.16456985,  0.208629385,  -0.278042287, 0.848652005,  0.490177989, -1.02567255,
                             -0.893162727, 4.13789415,   1.22958064,   -1.24763334,  0.202467248, 1.97666383,
                             -2.86629796,  0.211399719,  -0.254831612, 0.266746014,  -2.2076683,  -3.71751547})},
         {"mean", F({2, 1, 1}, {-0.203333333, 0.266666681})},
         {"inv_std", F({2, 1, 1}, {1.09551167, 0.928070486})}},
        1e-5, 1e-5);
  }
}

TEST_CASE("LayerNormalization float16 keeps float statistics", "[exec][kernels][math]") {
  // x = [1, 3]: mean 2, var 1, inv std 1/sqrt(1 + eps) ~ 1; y = [-1, 1] * scale 2 + bias 0.5.
  ExpectModel(
      R"(<ir_version: 8, opset_import: ["" : 17]>
g (float16[1,2] x, float16[2] s, float16[2] b) => (float16[1,2] y, float[1,1] mean, float[1,1] inv) {
  y, mean, inv = LayerNormalization <epsilon: float = 0.0> (x, s, b)
})",
      {{"x", Make(DataType::kFloat16, {1, 2}, {1, 3})},
       {"s", Make(DataType::kFloat16, {2}, {2, 2})},
       {"b", Make(DataType::kFloat16, {2}, {0.5, 0.5})}},
      {{"y", Make(DataType::kFloat16, {1, 2}, {-1.5, 2.5})}, {"mean", F({1, 1}, {2})}, {"inv", F({1, 1}, {1})}});
}

}  // namespace
}  // namespace memopt::math::testing

// Regenerating the expected arrays: build a one-node model with onnx.helper for the same inputs,
// run it with onnxruntime.InferenceSession(providers=["CPUExecutionProvider"]) and print the
// outputs with "%.9g" (inputs: numpy RandomState(42).randn rounded to 2 decimals).
