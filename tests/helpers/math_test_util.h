// Test helpers for the math kernel tests (header only, used by *_test.cc beside it): tensors from
// literals, a registry with just the math kernels (matrix products, convolution, pooling, norms, softmax, loss), and "run this text model, compare outputs".
#pragma once

#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "exec/executor.h"
#include "exec/kernels/math_util.h"
#include "helpers/cpu_kernels_of.h"
#include "io/model_loader.h"

namespace memopt::math::testing {

inline const KernelRegistry& MathRegistry() {
  static const KernelRegistry registry =
      ::memopt::testing::CpuKernelsOf({"matmul/matmul_cpu", "matmul/gemm_cpu", "conv/conv_cpu", "conv/conv_transpose_cpu", "conv/pool_cpu",
                    "norm/norm_cpu", "norm/layer_norm_cpu", "softmax/softmax_cpu", "loss/loss_cpu"});
  return registry;
}

/// A tensor of `dtype` holding `values` (converted, rounded for half types).
inline Tensor Make(DataType dtype, std::vector<int64_t> shape, const std::vector<double>& values) {
  Tensor t(dtype, std::move(shape));
  REQUIRE(static_cast<int64_t>(values.size()) == t.numel());
  for (int64_t i = 0; i < t.numel(); ++i) t.SetFromDouble(i, values[static_cast<size_t>(i)]);
  return t;
}
inline Tensor F(std::vector<int64_t> shape, const std::vector<double>& values) {
  return Make(DataType::kFloat, std::move(shape), values);
}
inline Tensor I64(std::vector<int64_t> shape, const std::vector<double>& values) {
  return Make(DataType::kInt64, std::move(shape), values);
}

/// Runs a model in ONNX text syntax through the executor with the math kernels.
inline std::map<std::string, Tensor> RunText(const std::string& text, const std::map<std::string, Tensor>& feeds) {
  auto model = LoadModelFromText(text);
  INFO(model.status().message());
  REQUIRE(model.ok());
  RunOptions options;
  options.registry = &MathRegistry();
  auto result = Execute(*model, feeds, options);
  INFO(result.status().message());
  REQUIRE(result.ok());
  return result->outputs;
}

/// Checks dtype, shape and |actual - expected| <= atol + rtol * |expected| for every element.
inline void ExpectClose(const Tensor& actual, const Tensor& expected, double rtol = 1e-5, double atol = 1e-6) {
  REQUIRE(actual.dtype() == expected.dtype());
  REQUIRE(actual.shape() == expected.shape());
  for (int64_t i = 0; i < actual.numel(); ++i) {
    const double a = actual.GetAsDouble(i), e = expected.GetAsDouble(i);
    INFO("element " << i << ": " << a << " vs expected " << e);
    if (std::isnan(e)) {
      CHECK(std::isnan(a));
    } else {
      CHECK(std::abs(a - e) <= atol + rtol * std::abs(e));
    }
  }
}

/// Runs `text` and compares every output named in `expected`.
inline void ExpectModel(const std::string& text, const std::map<std::string, Tensor>& feeds,
                        const std::map<std::string, Tensor>& expected, double rtol = 1e-5, double atol = 1e-6) {
  const auto outputs = RunText(text, feeds);
  for (const auto& [name, want] : expected) {
    INFO("output " << name);
    auto it = outputs.find(name);
    REQUIRE(it != outputs.end());
    ExpectClose(it->second, want, rtol, atol);
  }
}

}  // namespace memopt::math::testing
