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

Tensor CastTo(const Tensor& x, DataType to, int64_t saturate = 1) {
  Node n = MakeNode("Cast");
  SetAttr(n, "to", static_cast<int64_t>(to));
  if (saturate != 1) SetAttr(n, "saturate", saturate);
  std::vector<Tensor> out;
  Status st = RunKernel(Registry(), n, {&x}, out);
  INFO(st.message());
  REQUIRE(st.ok());
  REQUIRE(out[0].dtype() == to);
  REQUIRE(out[0].shape() == x.shape());
  return out[0];
}

std::vector<int> Bytes(const Tensor& t) {
  std::vector<int> b;
  for (int64_t i = 0; i < t.numel(); ++i) b.push_back(t.data<uint8_t>()[i]);
  return b;
}

const double kInf = std::numeric_limits<double>::infinity();

// Inputs of the ONNX node tests test_cast_FLOAT_to_FLOAT8* (expected codes from their outputs).
const std::vector<double> kFloat8Inputs = {0.47892547, 0.48033667, 0.49968487, 0.81910545, 0.47031248,
                                           0.72290379, 1e6,        1e-7,       std::nan(""), kInf,
                                           kInf,       -kInf,      -1e-7,      1e-7,       -1e6};

}  // namespace

TEST_CASE("Cast between numeric types", "[exec][cast]") {
  const Tensor f = F32({4}, {-2.7, 2.7, std::nan(""), 0.0});
  CHECK(Values(CastTo(f, DataType::kInt32)) == std::vector<double>{-2, 2, 0, 0});
  CHECK(Values(CastTo(f, DataType::kBool)) == std::vector<double>{1, 1, 1, 0});
  const Tensor i = MakeTensor(DataType::kInt64, {3}, {300, -1, 5});
  CHECK(Values(CastTo(i, DataType::kInt8)) == std::vector<double>{44, -1, 5});
  CHECK(Values(CastTo(i, DataType::kUint8)) == std::vector<double>{44, 255, 5});
  CHECK(Values(CastTo(i, DataType::kDouble)) == std::vector<double>{300, -1, 5});
  const Tensor b = MakeTensor(DataType::kBool, {2}, {1, 0});
  CHECK(Values(CastTo(b, DataType::kFloat)) == std::vector<double>{1, 0});
  // Same type: a copy.
  const Tensor same = CastTo(f, DataType::kFloat);
  CHECK(same.raw() != f.raw());
}

TEST_CASE("Cast to float16 and bfloat16 rounds to nearest even", "[exec][cast]") {
  const Tensor f = F32({3}, {0.1, 1.00390625, 1.01171875});
  const Tensor h = CastTo(f, DataType::kFloat16);
  CHECK(h.data<uint16_t>()[0] == FloatToFloat16(0.1f));
  CHECK(h.GetAsDouble(0) == 0.0999755859375);
  const Tensor bf = CastTo(f, DataType::kBfloat16);
  CHECK(bf.GetAsDouble(1) == 1.0);       // 1 + 2^-8 ties to even
  CHECK(bf.GetAsDouble(2) == 1.015625);  // 1 + 3 * 2^-8 ties up to even
  const Tensor back = CastTo(h, DataType::kDouble);
  CHECK(back.GetAsDouble(0) == 0.0999755859375);
}

TEST_CASE("Cast to float8 matches the ONNX test vectors", "[exec][cast]") {
  const Tensor f = F32({15}, kFloat8Inputs);
  CHECK(Bytes(CastTo(f, DataType::kFloat8E4M3FN)) ==
        std::vector<int>{0x2f, 0x2f, 0x30, 0x35, 0x2f, 0x34, 0x7e, 0x00, 0x7f, 0x7e, 0x7e, 0xfe, 0x80, 0x00, 0xfe});
  CHECK(Bytes(CastTo(f, DataType::kFloat8E5M2, 0)) ==
        std::vector<int>{0x38, 0x38, 0x38, 0x3b, 0x38, 0x3a, 0x7c, 0x00, 0x7e, 0x7c, 0x7c, 0xfc, 0x80, 0x00, 0xfc});
  // FNUZ formats: a single NaN code 0x80, no negative zero; saturation to 240 / 57344.
  const Tensor g = F32({5}, {1e6, std::nan(""), -1e-7, -kInf, 1.0});
  CHECK(Bytes(CastTo(g, DataType::kFloat8E4M3FNUZ)) == std::vector<int>{0x7f, 0x80, 0x00, 0xff, 0x40});
  CHECK(Bytes(CastTo(g, DataType::kFloat8E5M2FNUZ)) == std::vector<int>{0x7f, 0x80, 0x00, 0xff, 0x40});
  CHECK(Bytes(CastTo(g, DataType::kFloat8E4M3FNUZ, 0)) == std::vector<int>{0x80, 0x80, 0x00, 0x80, 0x40});
}

TEST_CASE("Cast from float8 decodes every format", "[exec][cast]") {
  Tensor e4(DataType::kFloat8E4M3FN, {4});
  const uint8_t codes[4] = {0x7e, 0x80, 0x01, 0x7f};  // 448, -0, smallest subnormal 2^-9, NaN
  for (int i = 0; i < 4; ++i) e4.data<uint8_t>()[i] = codes[i];
  const Tensor f = CastTo(e4, DataType::kFloat);
  CHECK(f.GetAsDouble(0) == 448.0);
  CHECK(f.GetAsDouble(1) == 0.0);
  CHECK(std::signbit(f.GetAsDouble(1)));
  CHECK(f.GetAsDouble(2) == std::ldexp(1.0, -9));
  CHECK(std::isnan(f.GetAsDouble(3)));
  Tensor e5(DataType::kFloat8E5M2, {3});
  const uint8_t codes5[3] = {0x7b, 0x7c, 0xfc};  // 57344, inf, -inf
  for (int i = 0; i < 3; ++i) e5.data<uint8_t>()[i] = codes5[i];
  CHECK(Values(CastTo(e5, DataType::kFloat)) == std::vector<double>{57344.0, kInf, -kInf});
  Tensor uz(DataType::kFloat8E4M3FNUZ, {2});
  uz.data<uint8_t>()[0] = 0x80;
  uz.data<uint8_t>()[1] = 0x7f;  // 240
  const Tensor u = CastTo(uz, DataType::kFloat16);
  CHECK(std::isnan(u.GetAsDouble(0)));
  CHECK(u.GetAsDouble(1) == 240.0);
}

TEST_CASE("Cast to int4/uint4/float4 wraps or saturates like the ONNX tests", "[exec][cast]") {
  const Tensor f = F32({5}, {-9, -8, 7, 8, 0});
  const Tensor i4 = CastTo(f, DataType::kInt4);
  std::vector<int> v;
  for (int64_t i = 0; i < i4.numel(); ++i) v.push_back(i4.data<int8_t>()[i]);
  CHECK(v == std::vector<int>{7, -8, 7, -8, 0});
  CHECK(Bytes(CastTo(f, DataType::kUint4)) == std::vector<int>{7, 8, 7, 8, 0});
  // float4 e2m1: 0.25 ties to 0, -3.5 ties to -4, 1e6 and inf saturate to 6.
  const Tensor g = F32({5}, {0.48, 0.25, -3.5, 1e6, kInf});
  CHECK(Bytes(CastTo(g, DataType::kFloat4E2M1)) == std::vector<int>{0x1, 0x0, 0xe, 0x7, 0x7});
}

TEST_CASE("CastLike takes the type of its second input", "[exec][cast]") {
  const Tensor x = F32({2}, {1.5, -2.5});
  const Tensor like = MakeTensor(DataType::kInt64, {0}, {});
  std::vector<Tensor> out;
  REQUIRE(RunKernel(Registry(), MakeNode("CastLike"), {&x, &like}, out).ok());
  CHECK(out[0].dtype() == DataType::kInt64);
  CHECK(Values(out[0]) == std::vector<double>{1, -2});
}

TEST_CASE("BitCast reinterprets bytes of equal-size types", "[exec][cast]") {
  const Tensor x = F32({2}, {1.0, -2.0});
  Node n = MakeNode("BitCast");
  SetAttr(n, "to", static_cast<int64_t>(DataType::kInt32));
  std::vector<Tensor> out;
  REQUIRE(RunKernel(Registry(), n, {&x}, out).ok());
  CHECK(out[0].dtype() == DataType::kInt32);
  CHECK(Values(out[0]) == std::vector<double>{1065353216.0, -1073741824.0});
  Node wide = MakeNode("BitCast");
  SetAttr(wide, "to", static_cast<int64_t>(DataType::kInt64));
  CHECK(RunKernel(Registry(), wide, {&x}, out).code() == ErrorCode::kUnsupported);
}
