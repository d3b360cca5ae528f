// Gradients of indexing / broadcasting ops: BroadcastGradientArgs (spec examples), DivGrad (hand
// arithmetic), Gather*Grad and SliceGrad (numpy indexing, training_test_expected.h).
#include <cstdint>
#include <limits>

#include <catch2/catch.hpp>

#include "exec/kernels/training_test_expected.h"
#include "helpers/training_test_util.h"
#include "util/half.h"

namespace memopt::testing {
namespace {

constexpr const char* kMs = "com.microsoft";
namespace ex = expected;

std::pair<std::vector<int64_t>, std::vector<int64_t>> Bga(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  KernelCall call(kMs, "BroadcastGradientArgs", 2);
  call.Input(I64({static_cast<int64_t>(a.size())}, a)).Input(I64({static_cast<int64_t>(b.size())}, b));
  auto out = MustRun(call);
  REQUIRE(out[0].dtype() == DataType::kInt64);
  return {out[0].ToInt64Vector(), out[1].ToInt64Vector()};
}

TEST_CASE("BroadcastGradientArgs lists reduction axes last to first", "[training][kernels]") {
  using V = std::vector<int64_t>;
  CHECK(Bga({2, 3, 4}, {4}) == std::pair{V{}, V{1, 0}});
  CHECK(Bga({2, 1, 4}, {2, 3, 4}) == std::pair{V{1}, V{}});
  CHECK(Bga({1, 3, 1}, {5, 1, 7}) == std::pair{V{2, 0}, V{1}});
  CHECK(Bga({7}, {2, 1, 7}) == std::pair{V{1, 0}, V{}});
  CHECK(Bga({}, {2, 3}) == std::pair{V{1, 0}, V{}});
  CHECK(Bga({2, 3}, {2, 3}) == std::pair{V{}, V{}});
  KernelCall bad(kMs, "BroadcastGradientArgs", 2);
  bad.Input(I64({2}, {2, 3})).Input(I64({2}, {2, 4}));
  auto r = bad.Run();
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message().find("do not broadcast") != std::string::npos);
  // Only b_axes wanted.
  KernelCall one(kMs, "BroadcastGradientArgs", 0);
  one.Output("").Output("b_axes").Input(I64({1}, {4})).Input(I64({2}, {3, 4}));
  auto out = MustRun(one);
  CHECK_FALSE(out[0].defined());
  CHECK(out[1].ToInt64Vector() == V{});
}

TEST_CASE("DivGrad reduces dA and dB over broadcast axes", "[training][kernels]") {
  // A [2,3], B [3]: dA = dY / B, dB[j] = -sum_i dY[i,j] * A[i,j] / B[j]^2.
  const std::vector<double> dy = {1, 2, 3, 4, 5, 6}, a = {1, -2, 3, 0.5, 4, -1}, b = {2, -4, 0.5};
  KernelCall call(kMs, "DivGrad", 2);
  call.Input(F64({2, 3}, dy)).Input(F64({2, 3}, a)).Input(F64({3}, b));
  auto out = MustRun(call);
  CheckClose(out[0], {0.5, -0.5, 6, 2, -1.25, 12}, 1e-12, 0);
  CheckClose(out[1], {-(1 * 1 + 4 * 0.5) / 4, -(2 * -2 + 5 * 4) / 16.0, -(3 * 3 + 6 * -1) / 0.25}, 1e-12, 0);
  REQUIRE(out[1].shape() == std::vector<int64_t>{3});
  // Only dB requested; A scalar broadcast.
  KernelCall only_b(kMs, "DivGrad", 0);
  only_b.Output("").Output("db").Input(F32({2}, {3, 4})).Input(F32({}, {2})).Input(F32({2}, {1, 2}));
  auto ob = MustRun(only_b);
  CHECK_FALSE(ob[0].defined());
  CheckClose(ob[1], {-3 * 2 / 1.0, -4 * 2 / 4.0});
}

TEST_CASE("GatherGrad scatter-adds, duplicates accumulate, negative indices wrap", "[training][kernels]") {
  KernelCall call(kMs, "GatherGrad");
  call.Input(I64({3}, {2, 5, 3})).Input(I64({2, 2}, {0, 4, -1, 0})).Input(F32({2, 2, 2, 3}, ex::kGgDy)).Int("axis", 1);
  Tensor dx = MustRun(call)[0];
  REQUIRE(dx.shape() == std::vector<int64_t>{2, 5, 3});
  CheckClose(dx, ex::kGgDx, 1e-6, 1e-6);
  KernelCall out_of_range(kMs, "GatherGrad");
  out_of_range.Input(I64({1}, {3})).Input(I64({1}, {3})).Input(F32({1}, {1}));
  REQUIRE_FALSE(out_of_range.Run().ok());
}

TEST_CASE("GatherElementsGrad scatter-adds along the axis", "[training][kernels]") {
  // data [2,3], axis 1, indices [[2,0],[1,1]] (dY [2,2]).
  KernelCall call(kMs, "GatherElementsGrad");
  call.Input(F32({2, 2}, {1, 2, 3, 4})).Input(I64({2}, {2, 3})).Input(I64({2, 2}, {2, 0, 1, -2})).Int("axis", 1);
  CheckClose(MustRun(call)[0], {2, 0, 1, 0, 7, 0}, 0, 0);
  // axis 0.
  KernelCall axis0(kMs, "GatherElementsGrad");
  axis0.Input(F32({1, 3}, {1, 2, 3})).Input(I64({2}, {2, 3})).Input(I64({1, 3}, {1, 0, 1})).Int("axis", 0);
  CheckClose(MustRun(axis0)[0], {0, 2, 0, 1, 0, 3}, 0, 0);
}

TEST_CASE("GatherNDGrad scatter-adds slices, with batch_dims", "[training][kernels]") {
  // shape [2,2,2], indices [[0,1],[1,0],[0,1]] (k = 2): slices of size 2.
  KernelCall call(kMs, "GatherNDGrad");
  call.Input(I64({3}, {2, 2, 2})).Input(I64({3, 2}, {0, 1, 1, 0, 0, 1})).Input(F32({3, 2}, {1, 2, 3, 4, 5, 6}));
  CheckClose(MustRun(call)[0], {0, 0, 6, 8, 3, 4, 0, 0}, 0, 0);
  // batch_dims 1: shape [2,3], indices [[2],[0]] -> dX[0,2] += u0, dX[1,0] += u1.
  KernelCall batch(kMs, "GatherNDGrad");
  batch.Input(I64({2}, {2, 3})).Input(I64({2, 1}, {2, 0})).Input(F32({2}, {7, 9})).Int("batch_dims", 1);
  CheckClose(MustRun(batch)[0], {0, 0, 7, 9, 0, 0}, 0, 0);
}

TEST_CASE("SliceGrad places dY in the slice region (negative steps, clamped ends)", "[training][kernels]") {
  const int64_t big = std::numeric_limits<int64_t>::max();
  KernelCall call(kMs, "SliceGrad");
  call.Input(F32({3, 2, 2}, ex::kSgDy)).Input(I64({3}, {4, 5, 6})).Input(I64({3}, {3, 1, -2}));
  call.Input(I64({3}, {0, 5, big})).Input(I64({3}, {0, 1, 2})).Input(I64({3}, {-1, 2, 1}));
  Tensor dx = MustRun(call)[0];
  REQUIRE(dx.shape() == std::vector<int64_t>{4, 5, 6});
  CheckClose(dx, ex::kSgDx, 1e-6, 1e-7);

  // Default axes/steps, int32 starts, an integer dtype (SliceGrad takes every type).
  KernelCall ints(kMs, "SliceGrad");
  ints.Input(I64({1, 3}, {7, 8, 9})).Input(I64({2}, {2, 3})).Input(MakeTensor(DataType::kInt32, {1}, {1}));
  ints.Input(MakeTensor(DataType::kInt32, {1}, {2}));
  Tensor di = MustRun(ints)[0];
  REQUIRE(di.dtype() == DataType::kInt64);
  CHECK(di.ToInt64Vector() == std::vector<int64_t>{0, 0, 0, 7, 8, 9});

  KernelCall mismatch(kMs, "SliceGrad");
  mismatch.Input(F32({2}, {1, 2})).Input(I64({1}, {5})).Input(I64({1}, {0})).Input(I64({1}, {3}));
  auto r = mismatch.Run();
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message().find("does not match the slice") != std::string::npos);
}

}  // namespace
}  // namespace memopt::testing

namespace memopt::testing {
namespace {

TEST_CASE("GatherGrad in float16 and bfloat16 rounds the float sums once", "[training][kernels]") {
  // 40 rows of 6 from 25 sources with repeats; values exact in both 16-bit types, so the 16-bit
  // result must be the float32 result rounded (the same sums, in the same order, in float).
  std::vector<int64_t> idx(25);
  for (size_t j = 0; j < idx.size(); ++j) idx[j] = static_cast<int64_t>((j * 7) % 13) - (j % 3 == 0 ? 13 : 0);
  std::vector<double> dy(25 * 6);
  for (size_t i = 0; i < dy.size(); ++i) dy[i] = static_cast<double>(static_cast<int>(i * 37 % 61) - 30) / 8.0;
  auto run = [&](DataType t) {
    KernelCall call(kMs, "GatherGrad");
    call.Input(I64({2}, {40, 6})).Input(I64({25}, idx)).Input(MakeTensor(t, {25, 6}, dy)).Int("axis", 0);
    return MustRun(call)[0];
  };
  const Tensor f = run(DataType::kFloat);
  for (DataType t : {DataType::kFloat16, DataType::kBfloat16}) {
    const Tensor h = run(t);
    REQUIRE(h.dtype() == t);
    REQUIRE(h.shape() == f.shape());
    for (int64_t i = 0; i < f.numel(); ++i) {
      const float v = f.data<float>()[i];
      CHECK(h.data<uint16_t>()[i] == (t == DataType::kFloat16 ? FloatToFloat16(v) : FloatToBfloat16(v)));
    }
  }
}

}  // namespace
}  // namespace memopt::testing
