#include "exec/tensor.h"

#include <cmath>
#include <cstdint>

#include <catch2/catch.hpp>

#include "util/half.h"

namespace memopt {
namespace {

TEST_CASE("half: every bit pattern round-trips through float", "[exec][half]") {
  int nans = 0;
  for (uint32_t h = 0; h < 65536; ++h) {
    const auto bits = static_cast<uint16_t>(h);
    const float f = Float16ToFloat(bits);
    const bool is_nan = (bits & 0x7c00u) == 0x7c00u && (bits & 0x3ffu) != 0;
    if (is_nan) {
      ++nans;
      INFO("half bits " << h);
      CHECK(std::isnan(f));
      const uint16_t back = FloatToFloat16(f);
      CHECK((back & 0x7c00u) == 0x7c00u);
      CHECK((back & 0x3ffu) != 0);  // still NaN
      CHECK((back & 0x8000u) == (bits & 0x8000u));
      continue;
    }
    if (FloatToFloat16(f) != bits) {
      FAIL("half bits " << h << " -> " << f << " -> " << FloatToFloat16(f));
    }
  }
  CHECK(nans == 2 * 1023);
}

TEST_CASE("half: known values and rounding", "[exec][half]") {
  CHECK(FloatToFloat16(1.0f) == 0x3c00);
  CHECK(FloatToFloat16(-2.0f) == 0xc000);
  CHECK(FloatToFloat16(65504.0f) == 0x7bff);  // largest finite half
  CHECK(FloatToFloat16(std::ldexp(1.0f, -24)) == 0x0001);  // smallest subnormal
  CHECK(FloatToFloat16(std::ldexp(1.0f, -14)) == 0x0400);  // smallest normal
  CHECK(Float16ToFloat(0x0001) == std::ldexp(1.0f, -24));
  CHECK(Float16ToFloat(0x7bff) == 65504.0f);
  CHECK(Float16ToFloat(0x3555) == 0.333251953125f);
  // 0.1 = 1.6 * 2^-4: mantissa 0.6 * 1024 = 614.4 -> 614 (0x266), exponent 15 - 4 = 11.
  CHECK(FloatToFloat16(0.1f) == 0x2e66);
  CHECK(Float16ToFloat(0x2e66) == 0.0999755859375f);
  // Overflow: 65520 is halfway between 65504 and 65536 (=inf): ties to even -> inf.
  CHECK(FloatToFloat16(65519.0f) == 0x7bff);
  CHECK(FloatToFloat16(65520.0f) == 0x7c00);
  CHECK(FloatToFloat16(-1e10f) == 0xfc00);
  CHECK(FloatToFloat16(INFINITY) == 0x7c00);
  // Subnormal ties: 2^-25 is halfway between 0 and 2^-24 -> 0 (even); 3 * 2^-25 -> 2 * 2^-24.
  CHECK(FloatToFloat16(std::ldexp(1.0f, -25)) == 0x0000);
  CHECK(FloatToFloat16(std::ldexp(1.5f, -25)) == 0x0001);
  CHECK(FloatToFloat16(std::ldexp(3.0f, -25)) == 0x0002);
  CHECK(FloatToFloat16(-0.0f) == 0x8000);
  // Normal ties: 1 + 2^-11 is halfway between 1 and 1 + 2^-10 -> 1 (even mantissa).
  CHECK(FloatToFloat16(1.0f + std::ldexp(1.0f, -11)) == 0x3c00);
  CHECK(FloatToFloat16(1.0f + 3 * std::ldexp(1.0f, -11)) == 0x3c02);
}

TEST_CASE("bfloat16: conversion rounds to nearest even", "[exec][half]") {
  CHECK(FloatToBfloat16(1.0f) == 0x3f80);
  CHECK(Bfloat16ToFloat(0x3f80) == 1.0f);
  CHECK(Bfloat16ToFloat(0xc040) == -3.0f);
  // 0x3f808000 is exactly halfway between 0x3f80 and 0x3f81: keep the even one.
  CHECK(FloatToBfloat16(BitsToFloat(0x3f808000u)) == 0x3f80);
  CHECK(FloatToBfloat16(BitsToFloat(0x3f818000u)) == 0x3f82);
  CHECK(FloatToBfloat16(BitsToFloat(0x3f808001u)) == 0x3f81);
  CHECK(FloatToBfloat16(BitsToFloat(0x3f807fffu)) == 0x3f80);
  CHECK(FloatToBfloat16(BitsToFloat(0x7f7fffffu)) == 0x7f80);  // rounds up to inf
  CHECK(FloatToBfloat16(INFINITY) == 0x7f80);
  CHECK(std::isnan(Bfloat16ToFloat(FloatToBfloat16(NAN))));
  CHECK(std::isnan(Bfloat16ToFloat(FloatToBfloat16(BitsToFloat(0x7f800001u)))));  // NaN payload in low bits
  for (uint32_t h = 0; h < 65536; ++h) {
    const auto bits = static_cast<uint16_t>(h);
    const float f = Bfloat16ToFloat(bits);
    if (std::isnan(f)) continue;
    if (FloatToBfloat16(f) != bits) FAIL("bfloat16 bits " << h);
  }
}

TEST_CASE("tensor: aligned zeroed buffer, views and copies", "[exec][tensor]") {
  Tensor t(DataType::kFloat, {2, 3});
  CHECK(t.numel() == 6);
  CHECK(t.bytes() == 24);
  CHECK(t.rank() == 2);
  CHECK(t.Describe() == "float[2, 3]");
  CHECK(reinterpret_cast<uintptr_t>(t.raw()) % 64 == 0);
  for (int64_t i = 0; i < 6; ++i) CHECK(t.data<float>()[i] == 0.0f);
  for (int64_t i = 0; i < 6; ++i) t.SetFromDouble(i, static_cast<double>(i) + 0.5);

  Tensor view = t.Reshaped({3, 2});
  CHECK(view.raw() == t.raw());
  CHECK(view.shape() == std::vector<int64_t>{3, 2});
  Tensor copy = t.Clone();
  CHECK(copy.raw() != t.raw());
  t.SetFromDouble(0, 42.0);
  CHECK(view.GetAsDouble(0) == 42.0);
  CHECK(copy.GetAsDouble(0) == 0.5);
  CHECK(copy.GetAsDouble(5) == 5.5);

  Tensor scalar(DataType::kInt64, {});
  CHECK(scalar.numel() == 1);
  CHECK(scalar.Describe() == "int64[]");
  Tensor empty(DataType::kFloat, {0, 4});
  CHECK(empty.numel() == 0);
  CHECK(empty.bytes() == 0);
  CHECK(empty.raw() != nullptr);
  CHECK_FALSE(Tensor().defined());
  CHECK(Strides({2, 3, 4}) == std::vector<int64_t>{12, 4, 1});
  CHECK(NumElements(std::vector<int64_t>{}) == 1);
}

TEST_CASE("tensor: GetAsDouble/SetFromDouble for every type", "[exec][tensor]") {
  const DataType types[] = {DataType::kFloat, DataType::kDouble, DataType::kFloat16, DataType::kBfloat16,
                            DataType::kInt8,  DataType::kUint8,  DataType::kInt16,   DataType::kUint16,
                            DataType::kInt32, DataType::kUint32, DataType::kInt64,   DataType::kUint64,
                            DataType::kBool};
  for (DataType dt : types) {
    INFO(DataTypeName(dt));
    Tensor t(dt, {4});
    CHECK(t.bytes() == 4 * ElemByteSize(dt));
    t.SetFromDouble(0, 3.0);
    t.SetFromDouble(1, 0.0);
    t.SetFromDouble(2, 1.0);
    CHECK(t.GetAsDouble(0) == (dt == DataType::kBool ? 1.0 : 3.0));
    CHECK(t.GetAsDouble(1) == 0.0);
    CHECK(t.GetAsDouble(2) == 1.0);
    CHECK(t.ToInt64Vector() == std::vector<int64_t>{dt == DataType::kBool ? 1 : 3, 0, 1, 0});
  }
  Tensor h(DataType::kFloat16, {1});
  h.SetFromDouble(0, 0.1);
  CHECK(h.data<uint16_t>()[0] == 0x2e66);
  Tensor b(DataType::kBfloat16, {1});
  b.SetFromDouble(0, 1.0);
  CHECK(b.data<uint16_t>()[0] == 0x3f80);
  Tensor i8(DataType::kInt8, {3});
  i8.SetFromDouble(0, -2.7);  // truncates toward zero
  i8.SetFromDouble(1, 1000.0);  // clamps instead of undefined behaviour
  i8.SetFromDouble(2, NAN);
  CHECK(i8.ToInt64Vector() == std::vector<int64_t>{-2, 127, 0});
  Tensor i64(DataType::kInt64, {1});
  i64.data<int64_t>()[0] = (int64_t{1} << 60) + 1;  // exact through ToInt64Vector
  CHECK(i64.ToInt64Vector()[0] == (int64_t{1} << 60) + 1);
  Tensor s(DataType::kString, {2});
  CHECK(s.strings().size() == 2);
  s.strings()[1] = "abc";
  CHECK(s.Clone().strings()[1] == "abc");
}

}  // namespace
}  // namespace memopt
