// The kernels that compute float16/bfloat16 tensors in float a chunk, row or tile at a time
// (exec/kernels/float_range.h): on inputs exact in both 16-bit types, each 16-bit result must be
// the float32 result rounded once, element for element, across chunk boundaries (9,000 elements:
// chunks of 4,096), with row biases, residuals, masks and broadcasts.
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "helpers/training_test_util.h"
#include "util/half.h"

namespace memopt::testing {
namespace {

constexpr const char* kMs = "com.microsoft";
const std::vector<int64_t> kShape = {3, 3000};

/// k / 64 for small integers k: exact in float16 and bfloat16 (at most 8 significant bits).
std::vector<double> Exact(int64_t n, int mod, int offset = 0) {
  std::vector<double> v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(static_cast<int>((i * 37 + offset) % mod) - mod / 2) / 64.0;
  return v;
}

/// Runs make(dtype) for float and each 16-bit type and checks every floating output is the float
/// one rounded (other outputs equal).
void ExpectRoundedOnce(const std::string& what, const std::function<KernelCall(DataType)>& make) {
  INFO(what);
  const std::vector<Tensor> f = MustRun(make(DataType::kFloat));
  for (DataType t : {DataType::kFloat16, DataType::kBfloat16}) {
    INFO(DataTypeName(t));
    const std::vector<Tensor> h = MustRun(make(t));
    REQUIRE(h.size() == f.size());
    for (size_t o = 0; o < f.size(); ++o) {
      INFO("output " << o);
      if (!f[o].defined()) continue;
      REQUIRE(h[o].shape() == f[o].shape());
      int64_t differ = 0;
      if (f[o].dtype() == DataType::kFloat && h[o].dtype() == t) {
        for (int64_t i = 0; i < f[o].numel(); ++i) {
          const float v = f[o].data<float>()[i];
          differ += h[o].data<uint16_t>()[i] != (t == DataType::kFloat16 ? FloatToFloat16(v) : FloatToBfloat16(v));
        }
      } else {
        for (int64_t i = 0; i < f[o].numel(); ++i) differ += f[o].GetAsDouble(i) != h[o].GetAsDouble(i);
      }
      CHECK(differ == 0);
    }
  }
}

TEST_CASE("16-bit elementwise training kernels: the float results rounded once", "[training][kernels][half]") {
  const int64_t n = kShape[0] * kShape[1];
  const std::vector<double> x = Exact(n, 201), dy = Exact(n, 97, 5), bias = Exact(kShape[1], 31, 3);
  for (const char* op : {"Gelu", "FastGelu", "QuickGelu"}) {
    ExpectRoundedOnce(op, [&](DataType t) {
      KernelCall c(kMs, op);
      c.Input(MakeTensor(t, kShape, x));
      return c;
    });
  }
  ExpectRoundedOnce("BiasGelu", [&](DataType t) {
    KernelCall c(kMs, "BiasGelu");
    c.Input(MakeTensor(t, kShape, x)).Input(MakeTensor(t, {kShape[1]}, bias));
    return c;
  });
  for (const char* op : {"GeluGrad", "FastGeluGrad", "QuickGeluGrad", "ReluGrad", "SigmoidGrad", "TanhGrad"}) {
    ExpectRoundedOnce(op, [&](DataType t) {
      KernelCall c(kMs, op);
      c.Input(MakeTensor(t, kShape, dy)).Input(MakeTensor(t, kShape, x));
      return c;
    });
  }
  for (const char* op : {"BiasGeluGrad_dX", "BiasFastGeluGrad_dX"}) {
    ExpectRoundedOnce(op, [&](DataType t) {
      KernelCall c(kMs, op);
      c.Input(MakeTensor(t, kShape, dy)).Input(MakeTensor(t, kShape, x)).Input(MakeTensor(t, {kShape[1]}, bias));
      return c;
    });
  }
  ExpectRoundedOnce("Dropout with its mask", [&](DataType t) {
    KernelCall c("", "Dropout", 2);
    c.Version(13).Input(MakeTensor(t, kShape, x)).Input(Scalar(DataType::kFloat, 0.25)).Input(BoolScalar(true));
    return c;
  });
  ExpectRoundedOnce("BitmaskBiasDropout with a residual", [&](DataType t) {
    KernelCall c(kMs, "BitmaskBiasDropout", 2);
    c.Input(MakeTensor(t, kShape, x)).Input(MakeTensor(t, {kShape[1]}, bias)).Input(MakeTensor(t, kShape, dy));
    c.Input(Scalar(DataType::kFloat, 0.5)).Input(BoolScalar(true));
    return c;
  });
  ExpectRoundedOnce("DropoutGrad", [&](DataType t) {
    std::vector<double> mask(static_cast<size_t>(n));
    for (size_t i = 0; i < mask.size(); ++i) mask[i] = i % 3 != 0;
    KernelCall c(kMs, "DropoutGrad");
    c.Input(MakeTensor(t, kShape, dy)).Input(MakeTensor(DataType::kBool, kShape, mask));
    c.Input(Scalar(DataType::kFloat, 0.5)).Input(BoolScalar(true));
    return c;
  });
  ExpectRoundedOnce("InPlaceAccumulatorV2", [&](DataType t) {
    KernelCall c(kMs, "InPlaceAccumulatorV2", 2);
    c.Input(MakeTensor(t, kShape, x)).Input(MakeTensor(t, kShape, dy));
    return c;
  });
  ExpectRoundedOnce("Scale", [&](DataType t) {
    KernelCall c(kMs, "Scale");
    c.Input(MakeTensor(t, kShape, x)).Input(Scalar(DataType::kFloat, 0.5));
    return c;
  });
  ExpectRoundedOnce("IsFinite", [&](DataType t) {
    KernelCall c(kMs, "IsFinite");
    c.Input(MakeTensor(t, kShape, x));
    return c;
  });
  ExpectRoundedOnce("MixedPrecisionScale, separate and fused", [&](DataType t) {
    KernelCall c(kMs, "MixedPrecisionScale", 1);
    c.Input(Scalar(DataType::kFloat, 0.25)).Input(MakeTensor(t, kShape, x)).Input(MakeTensor(t, {5}, Exact(5, 9)));
    c.Int("to", static_cast<int64_t>(t)).Int("fuse_outputs", 1);
    return c;
  });
  ExpectRoundedOnce("ATen embedding_backward, scaled by frequency", [&](DataType t) {
    std::vector<int64_t> idx(90);
    for (size_t i = 0; i < idx.size(); ++i) idx[i] = static_cast<int64_t>(i * 7 % 40);
    KernelCall c("org.pytorch.aten", "ATen");
    c.String("operator", "embedding_backward");
    c.Input(MakeTensor(t, {90, 100}, Exact(9000, 61))).Input(I64({90}, idx)).Input(I64({}, {50}));
    c.Input(I64({}, {3})).Input(BoolScalar(true)).Input(BoolScalar(false));
    return c;
  });
  ExpectRoundedOnce("BiasAdd", [&](DataType t) {
    KernelCall c(kMs, "BiasAdd");
    c.Input(MakeTensor(t, {3, 30, 100}, x)).Input(MakeTensor(t, {100}, Exact(100, 31))).Input(MakeTensor(t, {3, 30, 100}, dy));
    return c;
  });
}

TEST_CASE("16-bit layer normalisations and their gradients: the float results rounded once", "[training][kernels][half]") {
  const std::vector<int64_t> shape = {12, 700};
  const int64_t n = 12 * 700;
  const std::vector<double> x = Exact(n, 201), dy = Exact(n, 97, 5), gamma = Exact(700, 31, 3), beta = Exact(700, 23, 1);
  ExpectRoundedOnce("LayerNormalization with mean and inverse std", [&](DataType t) {
    KernelCall c("", "LayerNormalization", 3);
    c.Version(17).Input(MakeTensor(t, shape, x)).Input(MakeTensor(t, {700}, gamma)).Input(MakeTensor(t, {700}, beta));
    c.Int("axis", -1).Float("epsilon", 1e-5f);
    return c;
  });
  ExpectRoundedOnce("SkipLayerNormalization with the sum", [&](DataType t) {
    KernelCall c(kMs, "SkipLayerNormalization", 4);
    c.Input(MakeTensor(t, shape, x)).Input(MakeTensor(t, {3, 700}, Exact(2100, 61))).Input(MakeTensor(t, {700}, gamma));
    c.Input(MakeTensor(t, {700}, beta)).Input(MakeTensor(t, {700}, Exact(700, 11)));
    return c;
  });
  // Statistics of the float forward (the stash type stays float in the 16-bit runs).
  KernelCall forward("", "LayerNormalization", 3);
  forward.Version(17).Input(MakeTensor(DataType::kFloat, shape, x)).Input(MakeTensor(DataType::kFloat, {700}, gamma));
  forward.Input(MakeTensor(DataType::kFloat, {700}, beta)).Int("axis", -1);
  const std::vector<Tensor> stats = MustRun(forward);
  ExpectRoundedOnce("LayerNormalizationGrad", [&](DataType t) {
    KernelCall c(kMs, "LayerNormalizationGrad", 3);
    c.Input(MakeTensor(t, shape, dy)).Input(MakeTensor(t, shape, x)).Input(MakeTensor(t, {700}, gamma));
    c.Input(stats[1]).Input(stats[2]).Int("axis", -1);
    return c;
  });
  ExpectRoundedOnce("SimplifiedLayerNormalizationGrad", [&](DataType t) {
    KernelCall c(kMs, "SimplifiedLayerNormalizationGrad", 2);
    c.Input(MakeTensor(t, shape, dy)).Input(MakeTensor(t, shape, x)).Input(MakeTensor(t, {700}, gamma));
    c.Input(stats[2]).Int("axis", -1);
    return c;
  });
}

// Batch, instance and group normalisations and BatchNormalizationGrad.
TEST_CASE("16-bit batch-style normalisations: float results rounded once", "[training][kernels][half]") {
  const std::vector<int64_t> shape = {4, 6, 30, 40};
  const int64_t n = 4 * 6 * 1200;
  const std::vector<double> x = Exact(n, 201), dy = Exact(n, 97, 5), scale = Exact(6, 7, 3), bias = Exact(6, 5, 1);
  const std::vector<double> var = {0.5, 1, 1.5, 2, 0.25, 0.75};
  ExpectRoundedOnce("BatchNormalization, training", [&](DataType t) {
    KernelCall c("", "BatchNormalization", 3);
    c.Version(15).Input(MakeTensor(t, shape, x)).Input(MakeTensor(t, {6}, scale)).Input(MakeTensor(t, {6}, bias));
    c.Input(MakeTensor(t, {6}, bias)).Input(MakeTensor(t, {6}, var)).Int("training_mode", 1);
    return c;
  });
  ExpectRoundedOnce("InstanceNormalization", [&](DataType t) {
    KernelCall c("", "InstanceNormalization");
    c.Input(MakeTensor(t, shape, x)).Input(MakeTensor(t, {6}, scale)).Input(MakeTensor(t, {6}, bias));
    return c;
  });
  ExpectRoundedOnce("GroupNormalization", [&](DataType t) {
    KernelCall c("", "GroupNormalization");
    c.Version(21).Input(MakeTensor(t, shape, x)).Input(MakeTensor(t, {6}, scale)).Input(MakeTensor(t, {6}, bias));
    c.Int("num_groups", 3);
    return c;
  });
  ExpectRoundedOnce("BatchNormalizationGrad", [&](DataType t) {
    KernelCall c(kMs, "BatchNormalizationGrad", 3);
    c.Input(MakeTensor(t, shape, dy)).Input(MakeTensor(t, shape, x)).Input(MakeTensor(t, {6}, scale));
    c.Input(MakeTensor(DataType::kFloat, {6}, bias)).Input(MakeTensor(DataType::kFloat, {6}, var));
    return c;
  });
}

TEST_CASE("16-bit Conv, an image at a time: the float results rounded once", "[training][kernels][half]") {
  const std::vector<int64_t> shape = {3, 4, 20, 24};
  const std::vector<double> x = Exact(3 * 4 * 480, 201), w = Exact(6 * 2 * 9, 31, 3), b = Exact(6, 7);
  for (const char* strides : {"1", "2"}) {  // the direct convolution, and columns through a product
    ExpectRoundedOnce(std::string("Conv, strides ") + strides, [&](DataType t) {
      KernelCall c("", "Conv");
      c.Input(MakeTensor(t, shape, x)).Input(MakeTensor(t, {6, 2, 3, 3}, w)).Input(MakeTensor(t, {6}, b));
      c.Int("group", 2).Ints("pads", {1, 1, 1, 1}).Ints("strides", {std::stoll(strides), std::stoll(strides)});
      return c;
    });
  }
}

/// k-th index pattern: (i * step) % mod for i < n (repeats when n > mod / gcd).
std::vector<int64_t> Pattern(int64_t n, int64_t step, int64_t mod, int64_t offset = 0) {
  std::vector<int64_t> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = (i * step + offset) % mod;
  return v;
}

// Pooling, ConvTranspose and their gradients, a plane or image at a time.
TEST_CASE("16-bit pooling and convolution gradients: float results rounded once", "[training][kernels][half]") {
  const std::vector<double> x = Exact(2 * 3 * 9 * 10, 201);
  for (const char* op : {"AveragePool", "LpPool"}) {
    ExpectRoundedOnce(op, [&](DataType t) {
      KernelCall c("", op);
      c.Version(11).Input(MakeTensor(t, {2, 3, 9, 10}, x)).Ints("kernel_shape", {3, 3}).Ints("strides", {2, 2});
      c.Ints("pads", {1, 1, 1, 1});
      return c;
    });
  }
  // 3x3 windows at stride 1 overlap: input cells collect several terms.
  const std::vector<double> dy = Exact(2 * 3 * 6 * 6, 97, 5);
  ExpectRoundedOnce("AveragePoolGrad", [&](DataType t) {
    KernelCall c("", "AveragePoolGrad");
    c.Version(9).Input(MakeTensor(t, {2, 3, 6, 6}, dy)).Ints("kernel_shape", {3, 3}).Ints("pads", {1, 1, 1, 1});
    return c;
  });
  // X [2, 3, 8, 8], 3x3 windows at stride 1 (6x6 outputs): each index a cell of its own window.
  std::vector<int64_t> idx;
  for (int64_t p = 0; p < 6; ++p)
    for (int64_t oh = 0; oh < 6; ++oh)
      for (int64_t ow = 0; ow < 6; ++ow) idx.push_back(p * 64 + (oh + (ow % 3)) * 8 + ow + (oh % 2));
  ExpectRoundedOnce("MaxPoolGrad", [&](DataType t) {
    KernelCall c("", "MaxPoolGrad");
    c.Version(9).Input(MakeTensor(t, {2, 3, 6, 6}, dy)).Input(I64({2, 3, 6, 6}, idx)).Ints("kernel_shape", {3, 3});
    return c;
  });
  // Strides 2: dX through columns for every type (unit strides take a direct float kernel).
  const std::vector<double> cx = Exact(3 * 4 * 10 * 12, 201), w = Exact(6 * 2 * 9, 31, 3);
  const std::vector<double> cdy = Exact(3 * 6 * 5 * 6, 97, 5);
  ExpectRoundedOnce("ConvGrad", [&](DataType t) {
    KernelCall c(kMs, "ConvGrad", 3);
    c.Input(MakeTensor(t, {3, 6, 5, 6}, cdy)).Input(MakeTensor(t, {3, 4, 10, 12}, cx));
    c.Input(MakeTensor(t, {6, 2, 3, 3}, w)).Int("group", 2).Ints("pads", {1, 1, 1, 1}).Ints("strides", {2, 2});
    c.Ints("kernel_shape", {3, 3});
    return c;
  });
  const std::vector<double> tx = Exact(2 * 4 * 5 * 6, 201), tw = Exact(4 * 3 * 9, 31, 3), tb = Exact(6, 7);
  ExpectRoundedOnce("ConvTranspose", [&](DataType t) {
    KernelCall c("", "ConvTranspose");
    c.Input(MakeTensor(t, {2, 4, 5, 6}, tx)).Input(MakeTensor(t, {4, 3, 3, 3}, tw)).Input(MakeTensor(t, {6}, tb));
    c.Int("group", 2).Ints("strides", {2, 2}).Ints("pads", {1, 1, 1, 1});
    return c;
  });
}

// LRN, MeanVarianceNormalization, DivGrad, the scatter gradients, a broadcast accumulator, NLL.
TEST_CASE("16-bit walks and scatters: float results rounded once", "[training][kernels][half]") {
  const std::vector<double> x = Exact(2 * 7 * 5 * 6, 201);
  ExpectRoundedOnce("LRN", [&](DataType t) {
    KernelCall c("", "LRN");
    c.Input(MakeTensor(t, {2, 7, 5, 6}, x)).Int("size", 3);
    return c;
  });
  ExpectRoundedOnce("MeanVarianceNormalization", [&](DataType t) {
    KernelCall c("", "MeanVarianceNormalization");
    c.Input(MakeTensor(t, {2, 3, 40, 40}, Exact(2 * 3 * 1600, 201)));
    return c;
  });
  const int64_t n = kShape[0] * kShape[1];
  const std::vector<double> dy = Exact(n, 97, 5), a = Exact(n, 201), b = Exact(kShape[1], 31, 40);
  for (bool b_full : {false, true}) {
    // B strictly positive (k / 64 for k in 1..31 or 1..201).
    ExpectRoundedOnce(b_full ? "DivGrad, A broadcast" : "DivGrad, B broadcast", [&](DataType t) {
      std::vector<double> bp = b_full ? Exact(n, 201, 7) : b;
      for (double& v : bp) v = std::abs(v) + 1.0 / 64.0;
      KernelCall c(kMs, "DivGrad", 2);
      c.Input(MakeTensor(t, kShape, dy));
      c.Input(b_full ? MakeTensor(t, {kShape[1]}, b) : MakeTensor(t, kShape, a));
      c.Input(b_full ? MakeTensor(t, kShape, bp) : MakeTensor(t, {kShape[1]}, bp));
      return c;
    });
  }
  // 3 x 50 sources into 3 x 4,000 targets, many of them twice.
  ExpectRoundedOnce("GatherElementsGrad", [&](DataType t) {
    KernelCall c(kMs, "GatherElementsGrad");
    c.Input(MakeTensor(t, {3, 50}, Exact(150, 97, 5))).Input(I64({2}, {3, 4000}));
    c.Input(I64({3, 50}, Pattern(150, 7, 60))).Int("axis", 1);
    return c;
  });
  ExpectRoundedOnce("GatherNDGrad", [&](DataType t) {
    KernelCall c(kMs, "GatherNDGrad");
    c.Input(I64({2}, {50, 200})).Input(I64({30, 1}, Pattern(30, 3, 20))).Input(MakeTensor(t, {30, 200}, Exact(6000, 97, 5)));
    return c;
  });
  ExpectRoundedOnce("InPlaceAccumulatorV2, broadcast value", [&](DataType t) {
    KernelCall c(kMs, "InPlaceAccumulatorV2", 2);
    c.Input(MakeTensor(t, kShape, a)).Input(MakeTensor(t, {kShape[1]}, b));
    return c;
  });
  ExpectRoundedOnce("NegativeLogLikelihoodLoss", [&](DataType t) {
    KernelCall c("", "NegativeLogLikelihoodLoss");
    c.Version(13).Input(MakeTensor(t, {4, 5000}, Exact(20000, 201))).Input(I64({4}, {3, 4999, 0, 2500}));
    c.String("reduction", "none");
    return c;
  });
}

}  // namespace
}  // namespace memopt::testing
