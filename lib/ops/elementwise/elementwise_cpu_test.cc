#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "helpers/cpu_kernels_of.h"
#include "helpers/elementwise_test_util.h"
#include "util/half.h"

using namespace memopt;
using namespace memopt::testing;

namespace {

const KernelRegistry& Registry() {
  static const KernelRegistry r = CpuKernelsOf({"elementwise"});
  return r;
}

/// Runs a one-output op and returns output 0 (REQUIREs success).
Tensor Run1(const Node& node, const std::vector<const Tensor*>& inputs) {
  std::vector<Tensor> out;
  Status st = RunKernel(Registry(), node, inputs, out);
  INFO(st.message());
  REQUIRE(st.ok());
  REQUIRE(!out.empty());
  return out[0];
}

Tensor Run1(const std::string& op, const std::vector<const Tensor*>& inputs) { return Run1(MakeNode(op), inputs); }

void CheckClose(const Tensor& t, const std::vector<double>& expected, double eps = 1e-6) {
  REQUIRE(t.numel() == static_cast<int64_t>(expected.size()));
  for (int64_t i = 0; i < t.numel(); ++i) {
    INFO("element " << i);
    if (std::isnan(expected[i])) {
      CHECK(std::isnan(t.GetAsDouble(i)));
    } else {
      CHECK(t.GetAsDouble(i) == Approx(expected[i]).epsilon(eps).margin(1e-7));
    }
  }
}

}  // namespace

TEST_CASE("unary math and activations", "[exec][elementwise]") {
  const Tensor x = F32({5}, {-2.0, -0.5, 0.0, 0.5, 2.0});
  CheckClose(Run1("Relu", {&x}), {0, 0, 0, 0.5, 2});
  CheckClose(Run1("Abs", {&x}), {2, 0.5, 0, 0.5, 2});
  CheckClose(Run1("Neg", {&x}), {2, 0.5, 0, -0.5, -2});
  CheckClose(Run1("Sign", {&x}), {-1, -1, 0, 1, 1});
  CheckClose(Run1("Sigmoid", {&x}), {0.11920292, 0.37754067, 0.5, 0.62245933, 0.88079708});
  CheckClose(Run1("Softplus", {&x}), {0.12692801, 0.47407698, 0.69314718, 0.97407698, 2.12692801});
  CheckClose(Run1("Softsign", {&x}), {-2.0 / 3, -1.0 / 3, 0, 1.0 / 3, 2.0 / 3});
  CheckClose(Run1("HardSwish", {&x}), {-2 * (1.0 / 6), -0.5 * (0.5 - 0.5 / 6), 0, 0.5 * (0.5 + 0.5 / 6), 2 * (5.0 / 6)});
  // Gelu: x * Phi(x); tanh approximation within 1e-3 of it.
  CheckClose(Run1("Gelu", {&x}), {-0.04550026, -0.15426877, 0, 0.34573123, 1.95449974});
  Node tanh_gelu = MakeNode("Gelu");
  SetAttr(tanh_gelu, "approximate", std::string("tanh"));
  CheckClose(Run1(tanh_gelu, {&x}), {-0.04540231, -0.15428599, 0, 0.34571401, 1.95459769});
  Node leaky = MakeNode("LeakyRelu");
  SetAttr(leaky, "alpha", 0.1f);
  CheckClose(Run1(leaky, {&x}), {-0.2, -0.05, 0, 0.5, 2});
  CheckClose(Run1("Elu", {&x}), {std::expm1(-2.0), std::expm1(-0.5), 0, 0.5, 2});
  CheckClose(Run1("Swish", {&x}), {-0.23840584, -0.18877033, 0, 0.31122967, 1.76159416});
  Node shrink = MakeNode("Shrink");
  SetAttr(shrink, "lambd", 1.0f);
  SetAttr(shrink, "bias", 0.5f);
  CheckClose(Run1(shrink, {&x}), {-1.5, 0, 0, 0, 1.5});
}

TEST_CASE("Round is half to even, Floor/Ceil", "[exec][elementwise]") {
  const Tensor x = F32({6}, {0.5, 1.5, 2.5, -0.5, -1.5, 2.4});
  CheckClose(Run1("Round", {&x}), {0, 2, 2, -0, -2, 2});
  CheckClose(Run1("Floor", {&x}), {0, 1, 2, -1, -2, 2});
  CheckClose(Run1("Ceil", {&x}), {1, 2, 3, -0, -1, 3});
}

TEST_CASE("float16 and bfloat16 compute in float and round on store", "[exec][elementwise]") {
  const Tensor h = MakeTensor(DataType::kFloat16, {3}, {1.0, 2.0, -3.0});
  const Tensor y = Run1("Exp", {&h});
  REQUIRE(y.dtype() == DataType::kFloat16);
  // exp(1) = 2.71828 -> nearest half is 2.71875.
  CHECK(y.GetAsDouble(0) == 2.71875);
  CHECK(y.data<uint16_t>()[1] == FloatToFloat16(std::exp(2.0f)));
  const Tensor b = MakeTensor(DataType::kBfloat16, {2}, {1.0, 3.0});
  const Tensor s = Run1("Add", {&b, &b});
  REQUIRE(s.dtype() == DataType::kBfloat16);
  CheckClose(s, {2, 6});
}

TEST_CASE("IsNaN, IsInf with detect flags", "[exec][elementwise]") {
  const double inf = std::numeric_limits<double>::infinity();
  const Tensor x = F32({4}, {1.0, std::nan(""), inf, -inf});
  CheckClose(Run1("IsNaN", {&x}), {0, 1, 0, 0});
  CheckClose(Run1("IsInf", {&x}), {0, 0, 1, 1});
  Node pos_only = MakeNode("IsInf");
  SetAttr(pos_only, "detect_negative", int64_t{0});
  CheckClose(Run1(pos_only, {&x}), {0, 0, 1, 0});
}

TEST_CASE("binary broadcasting", "[exec][elementwise]") {
  const Tensor a = F32({2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor row = F32({3}, {10, 20, 30});
  const Tensor col = F32({2, 1}, {100, 200});
  const Tensor s = F32({}, {2});
  Tensor y = Run1("Add", {&a, &row});
  CHECK(y.shape() == std::vector<int64_t>{2, 3});
  CheckClose(y, {11, 22, 33, 14, 25, 36});
  CheckClose(Run1("Sub", {&a, &col}), {-99, -98, -97, -196, -195, -194});
  CheckClose(Run1("Mul", {&s, &a}), {2, 4, 6, 8, 10, 12});
  CheckClose(Run1("Div", {&a, &s}), {0.5, 1, 1.5, 2, 2.5, 3});
  // [2,1] + [3] -> [2,3]
  y = Run1("Add", {&col, &row});
  CHECK(y.shape() == std::vector<int64_t>{2, 3});
  CheckClose(y, {110, 120, 130, 210, 220, 230});
  const Tensor bad = F32({4}, {1, 2, 3, 4});
  std::vector<Tensor> out;
  Status st = RunKernel(Registry(), MakeNode("Add"), {&a, &bad}, out);
  CHECK(!st.ok());
  CHECK(st.message().find("cannot be broadcast") != std::string::npos);
}

TEST_CASE("integer Div truncates, Mod follows ONNX", "[exec][elementwise]") {
  const Tensor a = MakeTensor(DataType::kInt32, {4}, {-7, 7, -7, 7});
  const Tensor b = MakeTensor(DataType::kInt32, {4}, {2, -2, 3, -3});
  CheckClose(Run1("Div", {&a, &b}), {-3, -3, -2, -2});
  // fmod = 0: result has the sign of the divisor.
  CheckClose(Run1("Mod", {&a, &b}), {1, -1, 2, -2});
  Node fmod = MakeNode("Mod");
  SetAttr(fmod, "fmod", int64_t{1});
  CheckClose(Run1(fmod, {&a, &b}), {-1, 1, -1, 1});
  const Tensor fa = F32({2}, {-7.5, 7.5});
  const Tensor fb = F32({2}, {2, -2});
  CheckClose(Run1(fmod, {&fa, &fb}), {-1.5, 1.5});
  // Division by zero does not trap.
  const Tensor z = MakeTensor(DataType::kInt64, {1}, {0});
  const Tensor n = MakeTensor(DataType::kInt64, {1}, {5});
  CheckClose(Run1("Div", {&n, &z}), {0});
}

TEST_CASE("integer arithmetic wraps", "[exec][elementwise]") {
  const Tensor a = MakeTensor(DataType::kInt8, {2}, {100, -100});
  const Tensor b = MakeTensor(DataType::kInt8, {2}, {100, 100});
  CheckClose(Run1("Add", {&a, &b}), {-56, 0});
  const Tensor u = MakeTensor(DataType::kUint8, {1}, {3});
  const Tensor v = MakeTensor(DataType::kUint8, {1}, {5});
  CheckClose(Run1("Sub", {&u, &v}), {254});
}

TEST_CASE("Pow with mixed types", "[exec][elementwise]") {
  const Tensor x = F32({3}, {1, 2, 3});
  const Tensor e_int = MakeTensor(DataType::kInt64, {1}, {3});
  Tensor y = Run1("Pow", {&x, &e_int});
  CHECK(y.dtype() == DataType::kFloat);
  CheckClose(y, {1, 8, 27});
  const Tensor xi = MakeTensor(DataType::kInt32, {3}, {1, 2, 3});
  const Tensor e_f = F32({1}, {0.5});
  y = Run1("Pow", {&xi, &e_f});
  CHECK(y.dtype() == DataType::kInt32);
  CheckClose(y, {1, 1, 1});  // sqrt truncated
  const Tensor e_i = MakeTensor(DataType::kInt32, {3}, {2, 3, -1});
  CheckClose(Run1("Pow", {&xi, &e_i}), {1, 8, 0});
  const Tensor two = F32({}, {2});
  CheckClose(Run1("Pow", {&x, &two}), {1, 4, 9});
}

TEST_CASE("PRelu broadcasts the slope", "[exec][elementwise]") {
  const Tensor x = F32({2, 2}, {-1, 2, -3, 4});
  const Tensor slope = F32({2}, {0.5, 0.25});
  CheckClose(Run1("PRelu", {&x, &slope}), {-0.5, 2, -1.5, 4});
}

TEST_CASE("comparisons, logic, bitwise", "[exec][elementwise]") {
  const Tensor a = F32({3}, {1, 2, 3});
  const Tensor b = F32({1}, {2});
  Tensor y = Run1("Less", {&a, &b});
  CHECK(y.dtype() == DataType::kBool);
  CheckClose(y, {1, 0, 0});
  CheckClose(Run1("LessOrEqual", {&a, &b}), {1, 1, 0});
  CheckClose(Run1("Greater", {&a, &b}), {0, 0, 1});
  CheckClose(Run1("GreaterOrEqual", {&a, &b}), {0, 1, 1});
  CheckClose(Run1("Equal", {&a, &b}), {0, 1, 0});

  Tensor s1(DataType::kString, {2});
  s1.strings() = {"x", "y"};
  Tensor s2(DataType::kString, {1});
  s2.strings() = {"y"};
  CheckClose(Run1("Equal", {&s1, &s2}), {0, 1});

  const Tensor p = MakeTensor(DataType::kBool, {4}, {0, 0, 1, 1});
  const Tensor q = MakeTensor(DataType::kBool, {4}, {0, 1, 0, 1});
  CheckClose(Run1("And", {&p, &q}), {0, 0, 0, 1});
  CheckClose(Run1("Or", {&p, &q}), {0, 1, 1, 1});
  CheckClose(Run1("Xor", {&p, &q}), {0, 1, 1, 0});
  CheckClose(Run1("Not", {&p}), {1, 1, 0, 0});

  const Tensor u = MakeTensor(DataType::kUint8, {3}, {1, 6, 255});
  const Tensor sh = MakeTensor(DataType::kUint8, {3}, {1, 2, 9});
  Node left = MakeNode("BitShift");
  SetAttr(left, "direction", std::string("LEFT"));
  CheckClose(Run1(left, {&u, &sh}), {2, 24, 0});
  Node right = MakeNode("BitShift");
  SetAttr(right, "direction", std::string("RIGHT"));
  CheckClose(Run1(right, {&u, &sh}), {0, 1, 0});
  const Tensor i = MakeTensor(DataType::kInt32, {2}, {12, -1});
  const Tensor j = MakeTensor(DataType::kInt32, {2}, {10, 5});
  CheckClose(Run1("BitwiseAnd", {&i, &j}), {8, 5});
  CheckClose(Run1("BitwiseOr", {&i, &j}), {14, -1});
  CheckClose(Run1("BitwiseXor", {&i, &j}), {6, -6});
  CheckClose(Run1("BitwiseNot", {&i}), {-13, 0});
}

TEST_CASE("variadic Sum, Mean, Max, Min", "[exec][elementwise]") {
  const Tensor a = F32({2, 2}, {1, 2, 3, 4});
  const Tensor b = F32({2}, {10, 20});
  const Tensor c = F32({2, 1}, {100, 200});
  Tensor y = Run1("Sum", {&a, &b, &c});
  CHECK(y.shape() == std::vector<int64_t>{2, 2});
  CheckClose(y, {111, 122, 213, 224});
  CheckClose(Run1("Mean", {&a, &b, &c}), {37, 122.0 / 3, 71, 224.0 / 3});
  CheckClose(Run1("Max", {&a, &b}), {10, 20, 10, 20});
  CheckClose(Run1("Min", {&a, &b, &c}), {1, 2, 3, 4});
  // A broadcast first input is expanded to the full shape.
  y = Run1("Sum", {&b, &c, &a});
  CheckClose(y, {111, 122, 213, 224});
  CheckClose(Run1("Sum", {&a}), {1, 2, 3, 4});
  const Tensor n = F32({2}, {std::nan(""), 1});
  const Tensor m = F32({2}, {0, 2});
  CheckClose(Run1("Max", {&n, &m}), {std::nan(""), 2});
}

TEST_CASE("Where broadcasts condition and branches", "[exec][elementwise]") {
  const Tensor cond = MakeTensor(DataType::kBool, {2, 2}, {1, 0, 0, 1});
  const Tensor x = MakeTensor(DataType::kInt64, {2, 2}, {1, 2, 3, 4});
  const Tensor y = MakeTensor(DataType::kInt64, {}, {-1});
  CheckClose(Run1("Where", {&cond, &x, &y}), {1, -1, -1, 4});
  const Tensor row = MakeTensor(DataType::kBool, {2}, {1, 0});
  const Tensor col = F32({2, 1}, {5, 6});
  const Tensor other = F32({1}, {0});
  const Tensor w = Run1("Where", {&row, &col, &other});
  CHECK(w.shape() == std::vector<int64_t>{2, 2});
  CheckClose(w, {5, 0, 6, 0});
}

TEST_CASE("Clip attribute and input forms", "[exec][elementwise]") {
  const Tensor x = F32({4}, {-5, -1, 1, 5});
  Node old_clip = MakeNode("Clip");
  old_clip.since_version = 6;
  SetAttr(old_clip, "min", -2.0f);
  SetAttr(old_clip, "max", 2.0f);
  CheckClose(Run1(old_clip, {&x}), {-2, -1, 1, 2});
  const Tensor lo = F32({}, {0});
  CheckClose(Run1("Clip", {&x, &lo}), {0, 0, 1, 5});
  const Tensor hi = F32({}, {3});
  CheckClose(Run1("Clip", {&x, nullptr, &hi}), {-5, -1, 1, 3});
  const Tensor big = F32({}, {10});
  CheckClose(Run1("Clip", {&x, &big, &hi}), {3, 3, 3, 3});  // min > max: max wins
  const Tensor xi = MakeTensor(DataType::kInt8, {3}, {-100, 0, 100});
  const Tensor li = MakeTensor(DataType::kInt8, {}, {-10});
  CheckClose(Run1("Clip", {&xi, &li}), {-10, 0, 100});
}

TEST_CASE("Identity shares the input", "[exec][elementwise]") {
  const Tensor x = F32({2}, {1, 2});
  const Tensor y = Run1("Identity", {&x});
  CHECK(y.raw() == x.raw());
  CHECK(y.shape() == x.shape());
}

TEST_CASE("unsupported dtypes are reported, not crashed on", "[exec][elementwise]") {
  const Tensor i = MakeTensor(DataType::kInt32, {2}, {1, 2});
  std::vector<Tensor> out;
  Status st = RunKernel(Registry(), MakeNode("Exp"), {&i}, out);
  CHECK(st.code() == ErrorCode::kUnsupported);
  const KernelInfo* info = Registry().Find("", "Exp");
  REQUIRE(info != nullptr);
  CHECK(std::find(info->types.begin(), info->types.end(), DataType::kInt32) == info->types.end());
  CHECK(std::find(info->types.begin(), info->types.end(), DataType::kFloat16) != info->types.end());
}

namespace {

/// Element of `shape` (right-aligned broadcast) at output multi-index `idx`.
int64_t BroadcastIndex(const std::vector<int64_t>& shape, const std::vector<int64_t>& idx) {
  int64_t flat = 0;
  const size_t shift = idx.size() - shape.size();
  for (size_t d = 0; d < shape.size(); ++d) flat = flat * shape[d] + (shape[d] == 1 ? 0 : idx[d + shift]);
  return flat;
}

Tensor Pattern(std::vector<int64_t> shape, double scale) {
  std::vector<double> v(static_cast<size_t>(NumElements(shape)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = scale * static_cast<double>((i * 37) % 23);
  return F32(std::move(shape), v);
}

}  // namespace

TEST_CASE("broadcast patterns agree with a naive loop", "[exec][elementwise]") {
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> cases = {
      {{2, 1, 3}, {1, 4, 1}},       {{4, 3, 33, 33}, {4, 1, 1, 33}}, {{64, 1}, {64, 700}},
      {{5, 1, 7, 1}, {1, 6, 1, 8}}, {{3, 2, 1}, {2, 40}},            {{300, 257}, {300, 1}},
      {{1}, {2, 3}},                {{2, 3}, {}}};
  for (const auto& [sa, sb] : cases) {
    const Tensor a = Pattern(sa, 1.0);
    const Tensor b = Pattern(sb, 0.5);
    const Tensor y = Run1("Sub", {&a, &b});
    const std::vector<int64_t> shape = y.shape();
    const std::vector<int64_t> strides = Strides(shape);
    bool all_ok = true;
    for (int64_t i = 0; i < y.numel() && all_ok; ++i) {
      std::vector<int64_t> idx(shape.size());
      for (size_t d = 0; d < shape.size(); ++d) idx[d] = (i / strides[d]) % shape[d];
      const double expect = a.GetAsDouble(BroadcastIndex(sa, idx)) - b.GetAsDouble(BroadcastIndex(sb, idx));
      all_ok = y.GetAsDouble(i) == expect;
    }
    INFO(ShapeToString(sa) << " - " << ShapeToString(sb));
    CHECK(all_ok);
  }
  // Where with three broadcast operands (attention-mask style), large enough to use both threads.
  const Tensor cond = MakeTensor(DataType::kBool, {2, 1, 1, 64}, std::vector<double>(128, 0.0));
  Tensor c2 = cond.Clone();
  for (int64_t i = 0; i < c2.numel(); i += 3) c2.data<bool>()[i] = true;
  const Tensor x = Pattern({2, 8, 64, 64}, 1.0);
  const Tensor fill = F32({}, {-100});
  const Tensor w = Run1("Where", {&c2, &fill, &x});
  bool all_ok = true;
  for (int64_t i = 0; i < w.numel() && all_ok; ++i) {
    const int64_t bidx = i / (8 * 64 * 64);
    const int64_t col = i % 64;
    const double expect = c2.data<bool>()[bidx * 64 + col] ? -100.0 : x.GetAsDouble(i);
    all_ok = w.GetAsDouble(i) == expect;
  }
  CHECK(all_ok);
  const Tensor v = Run1("Where", {&c2, &x, &fill});  // the scalar in the other branch
  for (int64_t i = 0; i < v.numel() && all_ok; ++i) {
    const int64_t bidx = i / (8 * 64 * 64);
    const int64_t col = i % 64;
    const double expect = c2.data<bool>()[bidx * 64 + col] ? x.GetAsDouble(i) : -100.0;
    all_ok = v.GetAsDouble(i) == expect;
  }
  CHECK(all_ok);
}
