// Softmax-family gradients against central differences of ONNX Runtime's Softmax/LogSoftmax
// (training_test_expected.h), and against the CPU registry's forward kernels when present.
#include <cmath>

#include <catch2/catch.hpp>

#include "exec/kernels/training_test_expected.h"
#include "helpers/training_test_util.h"
#include "util/half.h"

namespace memopt::testing {
namespace {

constexpr const char* kMs = "com.microsoft";
namespace ex = expected;
const std::vector<int64_t> kShape = {2, 3, 4};

std::vector<double> RunGrad(const std::string& op, const std::vector<double>& dy, const std::vector<double>& y,
                            int64_t axis, DataType dtype = DataType::kDouble) {
  KernelCall call(kMs, op);
  call.Input(MakeTensor(dtype, kShape, dy)).Input(MakeTensor(dtype, kShape, y)).Int("axis", axis);
  return Values(MustRun(call)[0]);
}

TEST_CASE("SoftmaxGrad uses opset-11 rows, SoftmaxGrad_13 a single axis", "[training][kernels]") {
  CheckClose(RunGrad("SoftmaxGrad", ex::kSmDy, ex::kSmY11Axis1, 1), ex::kSmDx11Axis1, 1e-6, 1e-8);
  CheckClose(RunGrad("SoftmaxGrad_13", ex::kSmDy, ex::kSmY13Axis1, 1), ex::kSmDx13Axis1, 1e-6, 1e-8);
  CheckClose(RunGrad("SoftmaxGrad_13", ex::kSmDy, ex::kSmY13AxisM1, -1), ex::kSmDx13AxisM1, 1e-6, 1e-8);
  // float32 and float16 paths.
  CheckClose(RunGrad("SoftmaxGrad_13", ex::kSmDy, ex::kSmY13AxisM1, -1, DataType::kFloat), ex::kSmDx13AxisM1, 1e-4,
             1e-6);
  CheckClose(RunGrad("SoftmaxGrad", ex::kSmDy, ex::kSmY11Axis1, 1, DataType::kFloat16), ex::kSmDx11Axis1, 2e-2, 2e-3);
}

TEST_CASE("SoftmaxGrad defaults: axis 1 (opset 11) and -1 (opset 13)", "[training][kernels]") {
  KernelCall a(kMs, "SoftmaxGrad");
  a.Input(F64(kShape, ex::kSmDy)).Input(F64(kShape, ex::kSmY11Axis1));
  CheckClose(MustRun(a)[0], ex::kSmDx11Axis1, 1e-6, 1e-8);
  KernelCall b(kMs, "SoftmaxGrad_13");
  b.Input(F64(kShape, ex::kSmDy)).Input(F64(kShape, ex::kSmY13AxisM1));
  CheckClose(MustRun(b)[0], ex::kSmDx13AxisM1, 1e-6, 1e-8);
}

TEST_CASE("LogSoftmaxGrad and LogSoftmaxGrad_13 take the LogSoftmax output", "[training][kernels]") {
  CheckClose(RunGrad("LogSoftmaxGrad", ex::kSmDy, ex::kLsmY11Axis1, 1), ex::kLsmDx11Axis1, 1e-6, 1e-8);
  CheckClose(RunGrad("LogSoftmaxGrad_13", ex::kSmDy, ex::kLsmY13Axis1, 1), ex::kLsmDx13Axis1, 1e-6, 1e-8);
  CheckClose(RunGrad("LogSoftmaxGrad_13", ex::kSmDy, ex::kLsmY13AxisM1, -1), ex::kLsmDx13AxisM1, 1e-6, 1e-8);
}

TEST_CASE("SoftmaxGrad_13 equals finite differences of the registry's Softmax kernel", "[training][kernels]") {
  const KernelRegistry& cpu = KernelRegistry::Cpu();
  REQUIRE(cpu.Find("", "Softmax") != nullptr);
  auto softmax = [&](const std::vector<double>& x) {
    KernelCall call("", "Softmax");
    call.Version(13).Input(F64(kShape, x)).Int("axis", 1);
    return Values(MustRun(call, 0, nullptr, &cpu)[0]);
  };
  const std::vector<double> y = softmax(ex::kSmX);
  std::vector<double> fd(ex::kSmX.size());
  const double h = 1e-6;
  for (size_t j = 0; j < fd.size(); ++j) {
    std::vector<double> xp = ex::kSmX, xm = ex::kSmX;
    xp[j] += h;
    xm[j] -= h;
    const auto yp = softmax(xp), ym = softmax(xm);
    double s = 0;
    for (size_t i = 0; i < y.size(); ++i) s += (yp[i] - ym[i]) / (2 * h) * ex::kSmDy[i];
    fd[j] = s;
  }
  CheckClose(RunGrad("SoftmaxGrad_13", ex::kSmDy, y, 1), fd, 1e-6, 1e-8);
}

TEST_CASE("BiasSoftmaxDropout = Dropout(BiasSoftmax) with a reproducible mask", "[training][kernels]") {
  // data [2,2,3] (rows of 3 at axis 2), bias [2,1,3] broadcast over the inner batch dim.
  const std::vector<double> data = {0.1, 0.2, 0.3, -1.0, 0.0, 1.0, 2.0, 2.0, 2.0, 0.5, -0.5, 0.0};
  const std::vector<double> bias = {0.0, 1.0, -1.0, 0.5, 0.5, 0.0};
  auto make = [&](double ratio) {
    KernelCall call(kMs, "BiasSoftmaxDropout", 3);
    call.Input(F32({2, 2, 3}, data)).Input(F32({2, 1, 3}, bias)).Input(Scalar(DataType::kFloat, ratio));
    call.Int("axis", 2).Int("is_inner_broadcast", 1).Int("seed", 17);
    return call;
  };
  auto out = MustRun(make(0.5));
  auto again = MustRun(make(0.5));
  CHECK(Values(out[1]) == Values(again[1]));
  // Softmax rows with the bias of batch r / 2.
  std::vector<double> sm(12);
  for (int r = 0; r < 4; ++r) {
    double mx = -1e30, sum = 0;
    for (int d = 0; d < 3; ++d) mx = std::max(mx, data[r * 3 + d] + bias[(r / 2) * 3 + d]);
    for (int d = 0; d < 3; ++d) sum += std::exp(data[r * 3 + d] + bias[(r / 2) * 3 + d] - mx);
    for (int d = 0; d < 3; ++d) sm[r * 3 + d] = std::exp(data[r * 3 + d] + bias[(r / 2) * 3 + d] - mx) / sum;
  }
  CheckClose(out[2], sm);
  const auto mask = Values(out[1]);
  std::vector<double> expect(12);
  for (int i = 0; i < 12; ++i) expect[i] = mask[i] != 0 ? sm[i] * 2.0 : 0.0;
  CheckClose(out[0], expect);
  // Ratio 0 keeps everything.
  auto keep_all = MustRun(make(0.0));
  for (double m : Values(keep_all[1])) CHECK(m == 1.0);
  CheckClose(keep_all[0], sm);
  CHECK(make(0.5).IsRandom());
  CHECK_FALSE(make(0.0).IsRandom());
}

TEST_CASE("SoftmaxDropoutGrad = SoftmaxGrad(DropoutGrad(dy))", "[training][kernels]") {
  std::vector<double> mask(24);
  for (size_t i = 0; i < mask.size(); ++i) mask[i] = (i * 7) % 3 != 0 ? 1.0 : 0.0;
  const double ratio = 0.25;
  KernelCall call(kMs, "SoftmaxDropoutGrad");
  call.Input(F64(kShape, ex::kSmDy)).Input(MakeTensor(DataType::kBool, kShape, mask)).Input(F64(kShape, ex::kSmY11Axis1));
  call.Input(Scalar(DataType::kFloat, ratio)).Int("axis", 1);
  std::vector<double> g(24);
  for (size_t i = 0; i < g.size(); ++i) g[i] = mask[i] != 0 ? ex::kSmDy[i] / (1 - ratio) : 0.0;
  CheckClose(MustRun(call)[0], RunGrad("SoftmaxGrad", g, ex::kSmY11Axis1, 1), 1e-12, 1e-12);
}

TEST_CASE("SoftmaxGrad reports shape mismatches", "[training][kernels]") {
  KernelCall call(kMs, "SoftmaxGrad");
  call.Input(F32({2, 3}, {1, 2, 3, 4, 5, 6})).Input(F32({3, 2}, {1, 2, 3, 4, 5, 6}));
  auto r = call.Run();
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message().find("same shape") != std::string::npos);
  KernelCall bad_axis(kMs, "SoftmaxGrad_13");
  bad_axis.Input(F32({2}, {1, 2})).Input(F32({2}, {1, 2})).Int("axis", 3);
  REQUIRE_FALSE(bad_axis.Run().ok());
}

TEST_CASE("16-bit softmax gradients and BiasSoftmaxDropout: the float results rounded, row by row", "[training][kernels]") {
  // Inputs exact in float16, so the float16 runs compute what float32 does: contiguous rows of
  // 700, and axis 1 of [2, 300, 7] for the strided opset-13 rows.
  auto values = [](int64_t n, int mod, double scale) {
    std::vector<double> v(static_cast<size_t>(n));
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(static_cast<int>(i * 37 % mod) - mod / 2) * scale;
    return v;
  };
  auto same_rounded = [](const Tensor& f, const Tensor& h) {
    REQUIRE(h.dtype() == DataType::kFloat16);
    int64_t differ = 0;
    for (int64_t i = 0; i < f.numel(); ++i) differ += h.data<uint16_t>()[i] != FloatToFloat16(f.data<float>()[i]);
    CHECK(differ == 0);
  };
  for (const char* op : {"SoftmaxGrad_13", "LogSoftmaxGrad_13", "SoftmaxGrad"}) {
    for (const std::vector<int64_t>& shape : {std::vector<int64_t>{6, 700}, std::vector<int64_t>{2, 300, 7}}) {
      INFO(op << " rank " << shape.size());
      const int64_t n = shape[0] * shape[1] * (shape.size() > 2 ? shape[2] : 1);
      const std::vector<double> dy = values(n, 61, 1.0 / 32), y = values(n, 97, 1.0 / 256);
      auto run = [&](DataType t) {
        KernelCall call(kMs, op);
        call.Input(MakeTensor(t, shape, dy)).Input(MakeTensor(t, shape, y)).Int("axis", 1);
        return MustRun(call)[0];
      };
      same_rounded(run(DataType::kFloat), run(DataType::kFloat16));
    }
  }
  const std::vector<int64_t> shape = {6, 700};
  const std::vector<double> dy = values(4200, 61, 1.0 / 32), y = values(4200, 97, 1.0 / 256);
  std::vector<double> mask(4200);
  for (size_t i = 0; i < mask.size(); ++i) mask[i] = (i * 7) % 3 != 0 ? 1.0 : 0.0;
  auto dropout_grad = [&](DataType t) {
    KernelCall call(kMs, "SoftmaxDropoutGrad");
    call.Input(MakeTensor(t, shape, dy)).Input(MakeTensor(DataType::kBool, shape, mask)).Input(MakeTensor(t, shape, y));
    call.Input(Scalar(DataType::kFloat, 0.5)).Int("axis", 1);
    return MustRun(call)[0];
  };
  same_rounded(dropout_grad(DataType::kFloat), dropout_grad(DataType::kFloat16));
  auto bias_softmax_dropout = [&](DataType t) {
    KernelCall call(kMs, "BiasSoftmaxDropout", 3);
    call.Input(MakeTensor(t, shape, dy)).Input(MakeTensor(t, {700}, values(700, 9, 0.125)));
    call.Input(Scalar(DataType::kFloat, 0.5)).Int("axis", 1).Int("is_inner_broadcast", 0);
    return MustRun(call);
  };
  const std::vector<Tensor> f = bias_softmax_dropout(DataType::kFloat), h = bias_softmax_dropout(DataType::kFloat16);
  same_rounded(f[0], h[0]);
  same_rounded(f[2], h[2]);
  CHECK(Values(f[1]) == Values(h[1]));  // the same mask
}

}  // namespace
}  // namespace memopt::testing
