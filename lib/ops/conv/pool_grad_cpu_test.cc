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

}  // namespace
}  // namespace memopt::testing
