// Gelu-family forwards against ONNX Runtime; activation gradients against central differences of
// the forward kernels (float64) and of ORT's forwards (training_test_expected.h).
#include <cmath>
#include <functional>

#include <catch2/catch.hpp>

#include "exec/kernels/kernel_util.h"
#include "exec/kernels/training_test_expected.h"
#include "helpers/training_test_util.h"
#include "util/half.h"

namespace memopt::testing {
namespace {

constexpr const char* kMs = "com.microsoft";
namespace ex = expected;

std::vector<double> Forward(const std::string& op, const std::vector<double>& x, std::vector<int64_t> shape,
                            DataType dtype = DataType::kDouble, std::optional<float> alpha = std::nullopt) {
  KernelCall call(kMs, op);
  call.Input(MakeTensor(dtype, shape, x));
  if (alpha) call.Float("alpha", *alpha);
  return Values(MustRun(call)[0]);
}

/// Central differences of sum(f(x) * dy) for an elementwise f: df/dx_i * dy_i.
std::vector<double> ElementwiseFd(const std::string& op, const std::vector<double>& x, const std::vector<double>& dy,
                                  std::optional<float> alpha = std::nullopt) {
  const double h = 1e-6;
  std::vector<double> xp = x, xm = x;
  for (double& v : xp) v += h;
  for (double& v : xm) v -= h;
  const int64_t n = static_cast<int64_t>(x.size());
  auto fp = Forward(op, xp, {n}, DataType::kDouble, alpha);
  auto fm = Forward(op, xm, {n}, DataType::kDouble, alpha);
  std::vector<double> g(x.size());
  for (size_t i = 0; i < x.size(); ++i) g[i] = (fp[i] - fm[i]) / (2 * h) * dy[i];
  return g;
}

std::vector<double> Grad(const std::string& op, const std::vector<double>& dy, const std::vector<double>& x,
                         std::vector<int64_t> shape, DataType dtype = DataType::kDouble,
                         std::optional<std::vector<double>> bias = std::nullopt,
                         std::optional<float> alpha = std::nullopt) {
  KernelCall call(kMs, op);
  call.Input(MakeTensor(dtype, shape, dy)).Input(MakeTensor(dtype, shape, x));
  if (bias) call.Input(MakeTensor(dtype, {static_cast<int64_t>(bias->size())}, *bias));
  if (alpha) call.Float("alpha", *alpha);
  return Values(MustRun(call)[0]);
}

TEST_CASE("Gelu, BiasGelu, FastGelu, QuickGelu match onnxruntime", "[training][kernels]") {
  const std::vector<int64_t> shape = {3, 4};
  CheckClose(Forward("Gelu", ex::kActX, shape, DataType::kFloat), ex::kGeluY);
  CheckClose(Forward("FastGelu", ex::kActX, shape, DataType::kFloat), ex::kFastGeluY);
  CheckClose(Forward("QuickGelu", ex::kActX, shape, DataType::kFloat), ex::kQuickGeluY);
  CheckClose(Forward("QuickGelu", ex::kActX, shape, DataType::kFloat, 1.0f), ex::kQuickGeluAlpha1Y);
  for (const char* op : {"BiasGelu", "FastGelu"}) {
    KernelCall call(kMs, op);
    call.Input(F32(shape, ex::kActX)).Input(F32({4}, ex::kActBias));
    CheckClose(MustRun(call)[0], std::string(op) == "BiasGelu" ? ex::kBiasGeluY : ex::kFastGeluBiasY);
  }
}

TEST_CASE("Gelu forward in float16 and bfloat16 rounds the float result", "[training][kernels]") {
  for (DataType dt : {DataType::kFloat16, DataType::kBfloat16}) {
    KernelCall call(kMs, "Gelu");
    call.Input(MakeTensor(dt, {3, 4}, ex::kActX));
    Tensor y = MustRun(call)[0];
    REQUIRE(y.dtype() == dt);
    const double tol = dt == DataType::kFloat16 ? 2e-3 : 1e-2;
    CheckClose(y, ex::kGeluY, tol, 1e-3);
  }
}

TEST_CASE("Activation gradients equal finite differences of the forward kernels", "[training][kernels]") {
  const std::vector<double>& x = ex::kActX;
  const std::vector<double>& dy = ex::kActDy;
  const std::vector<int64_t> shape = {3, 4};
  CheckClose(Grad("GeluGrad", dy, x, shape), ElementwiseFd("Gelu", x, dy), 1e-6, 1e-8);
  // FastGeluGrad uses the exact constants, the forward the rounded ones (a ~1e-6 relative gap).
  CheckClose(Grad("FastGeluGrad", dy, x, shape), ElementwiseFd("FastGelu", x, dy), 2e-5, 1e-6);
  CheckClose(Grad("FastGeluGrad", dy, x, shape), ex::kFastGeluGradFd, 2e-5, 1e-6);
  CheckClose(Grad("QuickGeluGrad", dy, x, shape), ElementwiseFd("QuickGelu", x, dy), 1e-6, 1e-8);
  CheckClose(Grad("QuickGeluGrad", dy, x, shape), ex::kQuickGeluGradFd, 1e-6, 1e-8);
  CheckClose(Grad("QuickGeluGrad", dy, x, shape, DataType::kDouble, std::nullopt, 1.0f),
             ElementwiseFd("QuickGelu", x, dy, 1.0f), 1e-6, 1e-8);
}

TEST_CASE("BiasGeluGrad_dX and BiasFastGeluGrad_dX differentiate at X + B", "[training][kernels]") {
  const std::vector<int64_t> shape = {3, 4};
  std::vector<double> xb(ex::kActX.size());
  for (size_t i = 0; i < xb.size(); ++i) xb[i] = ex::kActX[i] + ex::kActBias[i % 4];
  CheckClose(Grad("BiasGeluGrad_dX", ex::kActDy, ex::kActX, shape, DataType::kDouble, ex::kActBias),
             ElementwiseFd("Gelu", xb, ex::kActDy), 1e-6, 1e-8);
  CheckClose(Grad("BiasFastGeluGrad_dX", ex::kActDy, ex::kActX, shape, DataType::kDouble, ex::kActBias),
             Grad("FastGeluGrad", ex::kActDy, xb, shape), 1e-12, 1e-12);
  // float32 path.
  CheckClose(Grad("BiasGeluGrad_dX", ex::kActDy, ex::kActX, shape, DataType::kFloat, ex::kActBias),
             ElementwiseFd("Gelu", xb, ex::kActDy), 1e-5, 1e-6);
}

TEST_CASE("Gelu and GeluGrad in float split over threads in chunks, a short one last", "[training][kernels]") {
  // 10000 elements: two 4096-element chunks and a short third, on two threads; each element must
  // equal the float64 kernels' value, wherever its chunk starts.
  const int before = memopt::NumThreads();
  memopt::SetNumThreads(2);
  const int64_t n = 10000;
  std::vector<double> x(static_cast<size_t>(n)), dy(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    x[static_cast<size_t>(i)] = -4.0 + 8.0 * static_cast<double>(i) / static_cast<double>(n);
    dy[static_cast<size_t>(i)] = 1.0 + static_cast<double>(i % 7) * 0.25;
  }
  CheckClose(Forward("Gelu", x, {n}, DataType::kFloat), Forward("Gelu", x, {n}), 1e-5, 1e-6);
  CheckClose(Grad("GeluGrad", dy, x, {n}, DataType::kFloat), Grad("GeluGrad", dy, x, {n}), 1e-5, 1e-6);
  memopt::SetNumThreads(before);
}

TEST_CASE("Relu, Sigmoid, Tanh and LeakyRelu gradients", "[training][kernels]") {
  const std::vector<double> dy = {1.0, -2.0, 3.0, 0.5};
  const std::vector<double> y = {-0.5, 0.0, 0.25, 2.0};
  CheckClose(Grad("ReluGrad", dy, y, {4}), {0.0, 0.0, 3.0, 0.5});
  CheckClose(Grad("SigmoidGrad", dy, y, {4}), {1.0 * -0.5 * 1.5, 0.0, 3.0 * 0.25 * 0.75, 0.5 * 2.0 * -1.0});
  CheckClose(Grad("TanhGrad", dy, y, {4}), {0.75, -2.0, 3.0 * (1 - 0.0625), 0.5 * (1 - 4.0)});
  CheckClose(Grad("LeakyReluGrad", dy, y, {4}, DataType::kFloat, std::nullopt, 0.1f), {0.1, -0.2, 3.0, 0.5});
  CheckClose(Grad("LeakyReluGrad", dy, y, {4}), {0.01, -0.02, 3.0, 0.5});
}

TEST_CASE("Activation kernels report bad inputs", "[training][kernels]") {
  KernelCall mismatch(kMs, "GeluGrad");
  mismatch.Input(F32({3}, {1, 2, 3})).Input(F32({2}, {1, 2}));
  auto r = mismatch.Run();
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message().find("GeluGrad") != std::string::npos);
  CHECK(r.status().message().find("same number of elements") != std::string::npos);

  KernelCall bad_bias(kMs, "BiasGelu");
  bad_bias.Input(F32({2, 3}, {1, 2, 3, 4, 5, 6})).Input(F32({2}, {1, 2}));
  REQUIRE_FALSE(bad_bias.Run().ok());

  KernelCall ints(kMs, "Gelu");
  ints.Input(I64({2}, {1, 2}));
  auto ri = ints.Run();
  REQUIRE_FALSE(ri.ok());
  CHECK(ri.status().message().find("int64") != std::string::npos);
}

}  // namespace
}  // namespace memopt::testing
