// Accumulation / utility ops of training graphs (hand arithmetic).
#include <cmath>
#include <limits>

#include <catch2/catch.hpp>

#include "helpers/training_test_util.h"

namespace memopt::testing {
namespace {

constexpr const char* kMs = "com.microsoft";

TEST_CASE("InPlaceAccumulatorV2 adds or overwrites and reports a flag", "[training][kernels]") {
  KernelCall call(kMs, "InPlaceAccumulatorV2", 2);
  call.Input(F32({2, 2}, {1, 2, 3, 4})).Input(F32({2, 2}, {10, 20, 30, 40})).Input(MakeTensor(DataType::kBool, {1}, {0}));
  auto out = MustRun(call);
  REQUIRE(out[0].dtype() == DataType::kBool);
  REQUIRE(out[0].shape() == std::vector<int64_t>{1});
  CHECK(Values(out[0]) == std::vector<double>{1});
  CheckClose(out[1], {11, 22, 33, 44}, 0, 0);

  KernelCall overwrite(kMs, "InPlaceAccumulatorV2", 2);
  overwrite.Input(F32({2, 2}, {1, 2, 3, 4})).Input(F32({2, 2}, {10, 20, 30, 40}));
  overwrite.Input(MakeTensor(DataType::kBool, {1}, {1}));
  CheckClose(MustRun(overwrite)[1], {10, 20, 30, 40}, 0, 0);

  // float16 gradient into a float buffer, broadcast row; only the flag output.
  KernelCall mixed(kMs, "InPlaceAccumulatorV2", 1);
  mixed.Input(F32({2, 2}, {1, 2, 3, 4})).Input(MakeTensor(DataType::kFloat16, {2}, {0.5, 0.25}));
  auto m = MustRun(mixed);
  CHECK(m.size() == 1);
  KernelCall mixed2(kMs, "InPlaceAccumulatorV2", 2);
  mixed2.Input(F32({2, 2}, {1, 2, 3, 4})).Input(MakeTensor(DataType::kFloat16, {2}, {0.5, 0.25}));
  Tensor acc = MustRun(mixed2)[1];
  REQUIRE(acc.dtype() == DataType::kFloat);
  CheckClose(acc, {1.5, 2.25, 3.5, 4.25}, 0, 0);

  KernelCall bad(kMs, "InPlaceAccumulatorV2", 2);
  bad.Input(F32({2}, {1, 2})).Input(F32({3}, {1, 2, 3}));
  REQUIRE_FALSE(bad.Run().ok());
}

TEST_CASE("InPlaceAccumulator honours update_signal", "[training][kernels]") {
  KernelCall call(kMs, "InPlaceAccumulator");
  call.Input(F32({2}, {1, 2})).Input(F32({2}, {3, 4}));
  CheckClose(MustRun(call)[0], {4, 6}, 0, 0);
  call.Input(BoolScalar(false));
  CheckClose(MustRun(call)[0], {1, 2}, 0, 0);
}

TEST_CASE("ZeroGradient, PassThrough and Group", "[training][kernels]") {
  KernelCall zero(kMs, "ZeroGradient");
  zero.Input(F64({3}, {1, 2, 3})).Input(BoolScalar(true));
  Tensor z = MustRun(zero)[0];
  CHECK(z.dtype() == DataType::kDouble);
  CheckClose(z, {0, 0, 0}, 0, 0);

  KernelCall pass(kMs, "PassThrough", 2);
  pass.Input(F32({2}, {1, 2})).Input(I64({1}, {7}));
  auto p = MustRun(pass);
  CheckClose(p[0], {1, 2}, 0, 0);
  CHECK(p[1].ToInt64Vector() == std::vector<int64_t>{7});

  KernelCall group(kMs, "Group");
  group.Input(F32({2}, {1, 2})).Input(BoolScalar(false));
  Tensor g = MustRun(group)[0];
  CHECK(g.dtype() == DataType::kBool);
  CHECK(g.rank() == 0);
  CHECK(Values(g) == std::vector<double>{1});
}

TEST_CASE("Scale multiplies or divides by a scalar", "[training][kernels]") {
  KernelCall mul(kMs, "Scale");
  mul.Input(F32({3}, {1, 2, 3})).Input(Scalar(DataType::kInt64, 4));
  CheckClose(MustRun(mul)[0], {4, 8, 12}, 0, 0);
  KernelCall div(kMs, "Scale");
  div.Input(MakeTensor(DataType::kBfloat16, {3}, {1, 2, 3})).Input(Scalar(DataType::kFloat, 4)).Int("scale_down", 1);
  Tensor d = MustRun(div)[0];
  CHECK(d.dtype() == DataType::kBfloat16);
  CheckClose(d, {0.25, 0.5, 0.75}, 0, 0);
}

TEST_CASE("IsAllFinite, IsFinite and ReduceAllL2", "[training][kernels]") {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  auto all_finite = [&](const std::vector<double>& b, int64_t inf_only, int64_t nan_only) {
    KernelCall call(kMs, "IsAllFinite");
    call.Input(F32({2}, {1, 2})).Input(MakeTensor(DataType::kFloat16, {2}, b));
    call.Int("isinf_only", inf_only).Int("isnan_only", nan_only);
    return Values(MustRun(call)[0])[0] != 0;
  };
  CHECK(all_finite({3, 4}, 0, 0));
  CHECK_FALSE(all_finite({3, inf}, 0, 0));
  CHECK_FALSE(all_finite({nan, 4}, 0, 0));
  CHECK(all_finite({nan, 4}, 1, 0));
  CHECK_FALSE(all_finite({-inf, 4}, 1, 0));
  CHECK(all_finite({-inf, 4}, 0, 1));

  KernelCall finite(kMs, "IsFinite");
  finite.Input(F64({4}, {1, inf, nan, -2}));
  CHECK(Values(MustRun(finite)[0]) == std::vector<double>{1, 0, 0, 1});

  KernelCall l2(kMs, "ReduceAllL2");
  l2.Input(F32({2}, {3, 4})).Input(F32({1}, {12}));
  Tensor n = MustRun(l2)[0];
  CHECK(n.rank() == 0);
  CheckClose(n, {13}, 0, 0);
}

TEST_CASE("MixedPrecisionScale casts scaled inputs, optionally fused", "[training][kernels]") {
  KernelCall call(kMs, "MixedPrecisionScale", 2);
  call.Input(Scalar(DataType::kFloat, 0.5)).Input(F32({2}, {2, 4})).Input(F32({1, 2}, {6, 8}));
  call.Int("to", static_cast<int64_t>(DataType::kFloat16));
  auto out = MustRun(call);
  CHECK(out[0].dtype() == DataType::kFloat16);
  CheckClose(out[0], {1, 2}, 0, 0);
  CHECK(out[1].shape() == std::vector<int64_t>{1, 2});
  CheckClose(out[1], {3, 4}, 0, 0);

  KernelCall fused(kMs, "MixedPrecisionScale", 1);
  fused.Input(Scalar(DataType::kFloat, 2)).Input(F32({2}, {1, 2})).Input(F32({1}, {3}));
  fused.Int("to", static_cast<int64_t>(DataType::kFloat)).Int("fuse_outputs", 1);
  Tensor f = MustRun(fused)[0];
  CHECK(f.shape() == std::vector<int64_t>{3});
  CheckClose(f, {2, 4, 6}, 0, 0);
}

}  // namespace
}  // namespace memopt::testing
