// Pool and conv gradients: MaxPoolGrad against central differences of ORT's MaxPool (float64),
// AveragePoolGrad and ConvGrad against exact adjoints of ORT's float32 forwards.
#include <catch2/catch.hpp>

#include "exec/kernels/training_test_expected.h"
#include "helpers/training_test_util.h"

namespace memopt::testing {
namespace {

constexpr const char* kMs = "com.microsoft";
namespace ex = expected;

/// A graph whose value 0 (the kernel's output y0) has the static shape `shape`.
Graph GraphWithOutputShape(const std::vector<int64_t>& shape) {
  Graph g;
  g.values.resize(1);
  g.values[0].name = "y0";
  g.values[0].info.dtype = DataType::kFloat;
  Shape s;
  for (int64_t d : shape) s.push_back(SymExpr(d));
  g.values[0].info.shape = s;
  return g;
}

TEST_CASE("MaxPoolGrad scatters into the statically inferred X shape", "[training][kernels]") {
  std::vector<int64_t> idx(ex::kMpIndices.begin(), ex::kMpIndices.end());
  KernelCall call("", "MaxPoolGrad");
  call.Version(9).Input(F64({1, 2, 2, 2}, ex::kMpDy)).Input(I64({1, 2, 2, 2}, idx));
  call.Ints("kernel_shape", {2, 2}).Ints("strides", {2, 2});
  // 5x5 inputs are not tiled by 2x2/2 windows: the shape must come from the graph.
  Graph g = GraphWithOutputShape({1, 2, 5, 5});
  Tensor dx = MustRun(call, 0, &g)[0];
  REQUIRE(dx.shape() == std::vector<int64_t>{1, 2, 5, 5});
  CheckClose(dx, ex::kMpDx, 1e-6, 1e-8);
  // Symbolic batch dim in the graph: N comes from dY.
  Graph sym;
  sym.values.resize(1);
  sym.values[0].info.shape = Shape{SymExpr::Symbol("batch"), SymExpr(2), SymExpr(5), SymExpr(5)};
  CHECK(MustRun(call, 0, &sym)[0].shape() == std::vector<int64_t>{1, 2, 5, 5});
  // Without a graph the smallest consistent X (4x4) cannot hold these flat indices: a clear error.
  auto r = call.Run();
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message().find("static X shape") != std::string::npos);
}

TEST_CASE("MaxPoolGrad without static shapes uses the tiled input size", "[training][kernels]") {
  // X [1,1,4,4], 2x2/2: indices of the maxima 5, 2, 13, 15.
  KernelCall call("", "MaxPoolGrad");
  call.Version(9).Input(F32({1, 1, 2, 2}, {1, 2, 3, 4})).Input(I64({1, 1, 2, 2}, {5, 2, 13, 15}));
  call.Ints("kernel_shape", {2, 2}).Ints("strides", {2, 2});
  Tensor dx = MustRun(call)[0];
  REQUIRE(dx.shape() == std::vector<int64_t>{1, 1, 4, 4});
  CheckClose(dx, {0, 0, 2, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 3, 0, 4}, 0, 0);
}

TEST_CASE("AveragePoolGrad equals the adjoint of ORT's AveragePool", "[training][kernels]") {
  for (int cip : {0, 1}) {
    INFO("count_include_pad " << cip);
    KernelCall call("", "AveragePoolGrad");
    call.Version(9).Input(F32({1, 1, 3, 3}, cip == 0 ? ex::kApDy0 : ex::kApDy1));
    call.Ints("kernel_shape", {3, 3}).Ints("strides", {2, 2}).Ints("pads", {1, 1, 1, 1}).Int("count_include_pad", cip);
    Tensor dx = MustRun(call)[0];  // 5x5 is exactly tiled: no graph needed
    REQUIRE(dx.shape() == std::vector<int64_t>{1, 1, 5, 5});
    CheckClose(dx, cip == 0 ? ex::kApDx0 : ex::kApDx1, 1e-5, 1e-6);
  }
}

TEST_CASE("AveragePoolGrad with auto_pad SAME_UPPER", "[training][kernels]") {
  // X [1,1,3]: kernel 2, stride 1, SAME_UPPER pads (0, 1): windows {0,1}, {1,2}, {2} (count 1).
  KernelCall call("", "AveragePoolGrad");
  call.Version(9).Input(F32({1, 1, 3}, {2, 4, 6})).Ints("kernel_shape", {2}).String("auto_pad", "SAME_UPPER");
  CheckClose(MustRun(call)[0], {1, 1 + 2, 2 + 6}, 0, 0);
}

TEST_CASE("ConvGrad equals the adjoints of ORT's Conv (groups, pads, strides, dilations)", "[training][kernels]") {
  std::vector<int64_t> dy_shape(ex::kConvDyShape.begin(), ex::kConvDyShape.end());
  KernelCall call(kMs, "ConvGrad", 3);
  call.Input(F32(dy_shape, ex::kConvDy)).Input(F32({1, 4, 4, 4}, ex::kConvX)).Input(F32({2, 2, 2, 2}, ex::kConvW));
  call.Int("group", 2).Ints("pads", {1, 1, 0, 0}).Ints("strides", {2, 1}).Ints("dilations", {1, 2});
  call.Ints("kernel_shape", {2, 2});
  auto out = MustRun(call);
  CheckClose(out[0], ex::kConvDx, 1e-5, 1e-5);
  CheckClose(out[1], ex::kConvDw, 1e-5, 1e-5);
  CheckClose(out[2], ex::kConvDb, 1e-5, 1e-5);
  REQUIRE(out[2].shape() == std::vector<int64_t>{2});
}

TEST_CASE("ConvGrad with unit strides gives the same dX for a float and a float64 dY", "[training][kernels]") {
  // Unit strides take the direct convolution for a float dY; a float64 dY computes in double.
  std::vector<double> x(1 * 2 * 5 * 5), w(3 * 2 * 3 * 3), dy(1 * 3 * 5 * 5);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<double>((i * 37) % 19) / 9.0 - 1.0;
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<double>((i * 53) % 23) / 11.0 - 1.0;
  for (size_t i = 0; i < dy.size(); ++i) dy[i] = static_cast<double>((i * 41) % 17) / 8.0 - 1.0;
  std::vector<Tensor> dx;
  for (bool f64 : {false, true}) {
    KernelCall call(kMs, "ConvGrad", 3);
    call.Input(f64 ? F64({1, 3, 5, 5}, dy) : F32({1, 3, 5, 5}, dy)).Input(F32({1, 2, 5, 5}, x));
    call.Input(F32({3, 2, 3, 3}, w)).Ints("pads", {1, 1, 1, 1}).Ints("kernel_shape", {3, 3});
    dx.push_back(MustRun(call)[0]);
  }
  REQUIRE(dx[1].dtype() == DataType::kFloat);
  std::vector<double> want(static_cast<size_t>(dx[0].numel()));
  for (int64_t i = 0; i < dx[0].numel(); ++i) want[static_cast<size_t>(i)] = dx[0].GetAsDouble(i);
  CheckClose(dx[1], want, 1e-5, 1e-5);
}

TEST_CASE("ConvGrad's dW past the slice partials' budget is one sum over the images", "[training][kernels]") {
  // W [288, 256, 3, 3]: 8 images would take 8 slices, whose 7 partials of 2.65 MB pass 16 MiB, so
  // they take one slice.
  const int64_t n = 8, c = 256, m = 288, hw = 5, o = 3;  // 5x5, stride 2, pad 1: 3x3
  std::vector<double> x(static_cast<size_t>(n * c * hw * hw)), dy(static_cast<size_t>(n * m * o * o));
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<double>((i * 37) % 19) / 9.0 - 1.0;
  for (size_t i = 0; i < dy.size(); ++i) dy[i] = static_cast<double>((i * 41) % 17) / 8.0 - 1.0;
  std::vector<double> w(static_cast<size_t>(m * c * 9), 0.5), dw(w.size(), 0.0);
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t mi = 0; mi < m; ++mi) {
      for (int64_t ci = 0; ci < c; ++ci) {
        for (int64_t p = 0; p < o * o; ++p) {
          for (int64_t t = 0; t < 9; ++t) {
            const int64_t ih = p / o * 2 - 1 + t / 3, iw = p % o * 2 - 1 + t % 3;
            if (ih < 0 || ih >= hw || iw < 0 || iw >= hw) continue;
            dw[static_cast<size_t>((mi * c + ci) * 9 + t)] += dy[static_cast<size_t>((b * m + mi) * o * o + p)] *
                                                            x[static_cast<size_t>(((b * c + ci) * hw + ih) * hw + iw)];
          }
        }
      }
    }
  }
  KernelCall call(kMs, "ConvGrad", 3);
  call.Input(F32({n, m, o, o}, dy)).Input(F32({n, c, hw, hw}, x)).Input(F32({m, c, 3, 3}, w));
  call.Ints("strides", {2, 2}).Ints("pads", {1, 1, 1, 1}).Ints("kernel_shape", {3, 3});
  const Tensor got = MustRun(call)[1];
  int64_t bad = -1;
  for (int64_t i = 0; i < got.numel() && bad < 0; ++i) {
    const double e = dw[static_cast<size_t>(i)];
    if (!(std::abs(got.GetAsDouble(i) - e) <= 1e-4 * (1 + std::abs(e)))) bad = i;
  }
  INFO("first dW element out of tolerance: " << bad);
  CHECK(bad == -1);
}

}  // namespace
}  // namespace memopt::testing
