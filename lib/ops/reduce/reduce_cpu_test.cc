#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <numeric>

#include "helpers/cpu_kernels_of.h"
#include "helpers/elementwise_test_util.h"

using namespace memopt;
using namespace memopt::testing;

namespace {

const KernelRegistry& Registry() {
  static const KernelRegistry r = CpuKernelsOf({"reduce/reduce_cpu"});
  return r;
}

Tensor Iota(std::vector<int64_t> shape, DataType dt = DataType::kFloat) {
  std::vector<double> v(static_cast<size_t>(NumElements(shape)));
  std::iota(v.begin(), v.end(), 0.0);
  return MakeTensor(dt, std::move(shape), v);
}

Tensor Axes(const std::vector<double>& axes) {
  return MakeTensor(DataType::kInt64, {static_cast<int64_t>(axes.size())}, axes);
}

/// Runs `op` (input form of axes when `axes` is given) and returns output 0.
Tensor Reduce(Node node, const Tensor& x, const Tensor* axes = nullptr) {
  std::vector<Tensor> out;
  std::vector<const Tensor*> inputs = {&x};
  if (axes != nullptr) inputs.push_back(axes);
  Status st = RunKernel(Registry(), node, inputs, out);
  INFO(st.message());
  REQUIRE(st.ok());
  return out[0];
}

Node WithKeep(const std::string& op, int64_t keepdims) {
  Node n = MakeNode(op);
  SetAttr(n, "keepdims", keepdims);
  return n;
}

void CheckClose(const Tensor& t, const std::vector<double>& expected) {
  REQUIRE(t.numel() == static_cast<int64_t>(expected.size()));
  for (int64_t i = 0; i < t.numel(); ++i) {
    INFO("element " << i);
    if (std::isinf(expected[i])) {
      CHECK(t.GetAsDouble(i) == expected[i]);
    } else {
      CHECK(t.GetAsDouble(i) == Approx(expected[i]).epsilon(1e-6));
    }
  }
}

}  // namespace

TEST_CASE("ReduceSum over inner, outer and all axes", "[exec][reduce]") {
  const Tensor x = Iota({2, 3, 4});  // x[b][j][k] = 12b + 4j + k
  const Tensor a1 = Axes({1});
  Tensor y = Reduce(MakeNode("ReduceSum"), x, &a1);
  CHECK(y.shape() == std::vector<int64_t>{2, 1, 4});
  CheckClose(y, {12, 15, 18, 21, 48, 51, 54, 57});
  const Tensor a02 = Axes({0, -1});
  y = Reduce(WithKeep("ReduceSum", 0), x, &a02);
  CHECK(y.shape() == std::vector<int64_t>{3});
  CheckClose(y, {60, 92, 124});
  y = Reduce(MakeNode("ReduceSum"), x);
  CHECK(y.shape() == std::vector<int64_t>{1, 1, 1});
  CheckClose(y, {276});
  const Tensor a2 = Axes({2});
  y = Reduce(WithKeep("ReduceSum", 0), x, &a2);
  CheckClose(y, {6, 22, 38, 54, 70, 86});
}

TEST_CASE("ReduceSum noop_with_empty_axes and attribute axes", "[exec][reduce]") {
  const Tensor x = Iota({2, 3});
  const Tensor empty = Axes({});
  Node noop = MakeNode("ReduceSum");
  SetAttr(noop, "noop_with_empty_axes", int64_t{1});
  Tensor y = Reduce(noop, x, &empty);
  CHECK(y.shape() == std::vector<int64_t>{2, 3});
  CheckClose(y, {0, 1, 2, 3, 4, 5});
  y = Reduce(MakeNode("ReduceSum"), x, &empty);  // empty axes without noop: all
  CheckClose(y, {15});
  Node old = WithKeep("ReduceMean", 0);
  old.since_version = 13;
  SetAttr(old, "axes", std::vector<int64_t>{0});
  CheckClose(Reduce(old, x), {1.5, 2.5, 3.5});
}

TEST_CASE("ReduceSumTraining takes axes as an input", "[exec][reduce]") {
  const Tensor x = Iota({2, 3});
  const Tensor a = Axes({0});
  Node n = MakeNode("ReduceSumTraining", 1, "com.microsoft");
  n.since_version = 1;
  const Tensor y = Reduce(n, x, &a);
  CHECK(y.shape() == std::vector<int64_t>{1, 3});
  CheckClose(y, {3, 5, 7});
}

TEST_CASE("Max, Min, Mean, Prod, norms and logs", "[exec][reduce]") {
  const Tensor x = Iota({2, 3, 4});
  const Tensor a0 = Axes({0});
  const Tensor a12 = Axes({1, 2});
  const Tensor last = Axes({-1});
  CheckClose(Reduce(WithKeep("ReduceMax", 0), x, &a0), {12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23});
  CheckClose(Reduce(WithKeep("ReduceMin", 0), x, &a12), {0, 12});
  CheckClose(Reduce(WithKeep("ReduceMean", 0), x, &last), {1.5, 5.5, 9.5, 13.5, 17.5, 21.5});

  const Tensor m = F32({2, 2}, {-1, 2, 3, -4});
  const Tensor a1 = Axes({1});
  CheckClose(Reduce(WithKeep("ReduceProd", 0), m, &a1), {-2, -12});
  CheckClose(Reduce(WithKeep("ReduceL1", 0), m), {10});
  CheckClose(Reduce(WithKeep("ReduceL2", 0), m), {std::sqrt(30.0)});
  CheckClose(Reduce(WithKeep("ReduceSumSquare", 0), m), {30});
  const Tensor p = F32({2, 2}, {1, 2, 3, 4});
  CheckClose(Reduce(WithKeep("ReduceLogSum", 0), p, &a1), {std::log(3.0), std::log(7.0)});
  CheckClose(Reduce(WithKeep("ReduceLogSumExp", 0), p, &a1),
             {std::log(std::exp(1.0) + std::exp(2.0)), std::log(std::exp(3.0) + std::exp(4.0))});
  // No overflow for large inputs.
  const Tensor big = F32({2}, {1000, 1000});
  CheckClose(Reduce(WithKeep("ReduceLogSumExp", 0), big), {1000 + std::log(2.0)});
}

TEST_CASE("reductions over an empty axis give the identity", "[exec][reduce]") {
  const Tensor x = F32({2, 0}, {});
  const Tensor a1 = Axes({1});
  const double inf = std::numeric_limits<double>::infinity();
  Tensor y = Reduce(MakeNode("ReduceSum"), x, &a1);
  CHECK(y.shape() == std::vector<int64_t>{2, 1});
  CheckClose(y, {0, 0});
  CheckClose(Reduce(MakeNode("ReduceProd"), x, &a1), {1, 1});
  CheckClose(Reduce(MakeNode("ReduceMax"), x, &a1), {-inf, -inf});
  CheckClose(Reduce(MakeNode("ReduceMin"), x, &a1), {inf, inf});
  CheckClose(Reduce(MakeNode("ReduceLogSumExp"), x, &a1), {-inf, -inf});
  CheckClose(Reduce(MakeNode("ReduceLogSum"), x, &a1), {-inf, -inf});
  // Reducing a non-empty axis of an empty tensor gives an empty result.
  const Tensor a0 = Axes({0});
  y = Reduce(MakeNode("ReduceSum"), x, &a0);
  CHECK(y.shape() == std::vector<int64_t>{1, 0});
}

TEST_CASE("ReduceMax/Min on bool, integer and half inputs", "[exec][reduce]") {
  const Tensor b = MakeTensor(DataType::kBool, {2, 2}, {1, 0, 0, 0});
  const Tensor a1 = Axes({1});
  Tensor y = Reduce(WithKeep("ReduceMax", 0), b, &a1);
  CHECK(y.dtype() == DataType::kBool);
  CheckClose(y, {1, 0});
  CheckClose(Reduce(WithKeep("ReduceMin", 0), b, &a1), {0, 0});
  const Tensor i = Iota({3, 2}, DataType::kInt32);
  y = Reduce(WithKeep("ReduceSum", 0), i);
  CHECK(y.dtype() == DataType::kInt32);
  CheckClose(y, {15});
  const Tensor h = MakeTensor(DataType::kFloat16, {4}, {1, 2, 3, 4.5});
  y = Reduce(WithKeep("ReduceMean", 0), h);
  CHECK(y.dtype() == DataType::kFloat16);
  CheckClose(y, {2.625});
  std::vector<Tensor> out;
  CHECK(!RunKernel(Registry(), MakeNode("ReduceSum"), {&b}, out).ok());
}

TEST_CASE("ReduceMax propagates NaN", "[exec][reduce]") {
  const Tensor x = F32({3}, {1, std::nan(""), 2});
  CHECK(std::isnan(Reduce(WithKeep("ReduceMax", 0), x).GetAsDouble(0)));
  std::vector<double> v(21, 1.0);
  v[13] = std::nan("");
  const Tensor longer = F32({21}, v);
  CHECK(std::isnan(Reduce(WithKeep("ReduceMax", 0), longer).GetAsDouble(0)));
  CHECK(std::isnan(Reduce(WithKeep("ReduceMin", 0), longer).GetAsDouble(0)));
}

TEST_CASE("reductions with axes out of range are errors", "[exec][reduce]") {
  const Tensor x = Iota({2, 3});
  const Tensor bad = Axes({2});
  std::vector<Tensor> out;
  Status st = RunKernel(Registry(), MakeNode("ReduceSum"), {&x, &bad}, out);
  CHECK(!st.ok());
  CHECK(st.message().find("out of range") != std::string::npos);
}

TEST_CASE("large reductions agree with a plain loop (threaded paths)", "[exec][reduce]") {
  const int64_t rows = 300, cols = 257;
  std::vector<double> v(static_cast<size_t>(rows * cols));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>((i * 7919) % 101) - 50.0;
  const Tensor x = F32({rows, cols}, v);
  const Tensor a0 = Axes({0});
  const Tensor a1 = Axes({1});
  const Tensor s0 = Reduce(WithKeep("ReduceSum", 0), x, &a0);
  const Tensor s1 = Reduce(WithKeep("ReduceSum", 0), x, &a1);
  for (int64_t c = 0; c < cols; ++c) {
    double s = 0;
    for (int64_t r = 0; r < rows; ++r) s += v[r * cols + c];
    CHECK(s0.GetAsDouble(c) == s);
  }
  for (int64_t r = 0; r < rows; ++r) {
    double s = 0;
    for (int64_t c = 0; c < cols; ++c) s += v[r * cols + c];
    CHECK(s1.GetAsDouble(r) == s);
  }
}

TEST_CASE("ArgMax/ArgMin with keepdims and select_last_index", "[exec][reduce]") {
  const Tensor x = F32({2, 3}, {1, 3, 3, 5, 2, 5});
  Node n = MakeNode("ArgMax");
  SetAttr(n, "axis", int64_t{1});
  Tensor y = Reduce(n, x);
  CHECK(y.dtype() == DataType::kInt64);
  CHECK(y.shape() == std::vector<int64_t>{2, 1});
  CheckClose(y, {1, 0});
  Node last = MakeNode("ArgMax");
  SetAttr(last, "axis", int64_t{-1});
  SetAttr(last, "keepdims", int64_t{0});
  SetAttr(last, "select_last_index", int64_t{1});
  y = Reduce(last, x);
  CHECK(y.shape() == std::vector<int64_t>{2});
  CheckClose(y, {2, 2});
  CheckClose(Reduce(WithKeep("ArgMin", 0), x), {0, 1, 0});
}
