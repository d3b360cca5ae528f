// Dropout family: mask consistency (output == data * mask / (1 - ratio)), determinism for a seed,
// the bit-packed layout, inference mode, and the gradients. ORT's masks come from another
// generator, so masks are checked for consistency rather than against ORT.
#include <catch2/catch.hpp>
#include <cmath>

#include "helpers/training_test_util.h"
#include "exec/philox.h"

namespace memopt::testing {
namespace {

constexpr const char* kMs = "com.microsoft";

std::vector<double> Ramp(int64_t n, double start = -3.0) {
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = start + 0.37 * static_cast<double>(i);
  return v;
}

KernelCall OnnxDropout(const std::vector<double>& x, std::vector<int64_t> shape, double ratio, bool training,
                       std::optional<int64_t> seed) {
  KernelCall call("", "Dropout", 2);
  call.Version(13).Input(F32(std::move(shape), x)).Input(Scalar(DataType::kFloat, ratio)).Input(BoolScalar(training));
  if (seed) call.Int("seed", *seed);
  return call;
}

TEST_CASE("Dropout output is data * mask / (1 - ratio) and the mask keeps about 1 - ratio", "[training][kernels]") {
  const int64_t n = 4003;  // not a multiple of 4 or 32
  const auto x = Ramp(n);
  for (double ratio : {0.1, 0.5, 0.75}) {
    auto out = MustRun(OnnxDropout(x, {n}, ratio, true, 1234));
    REQUIRE(out[1].dtype() == DataType::kBool);
    const auto y = Values(out[0]), m = Values(out[1]);
    int64_t kept = 0;
    for (int64_t i = 0; i < n; ++i) {
      const double expect = m[i] != 0 ? static_cast<double>(static_cast<float>(x[i])) / (1 - ratio) : 0.0;
      REQUIRE(std::abs(y[i] - expect) <= 1e-5 * std::abs(expect) + 1e-6);
      kept += m[i] != 0 ? 1 : 0;
    }
    const double sigma = std::sqrt(n * ratio * (1 - ratio));
    CHECK(std::abs(kept - n * (1 - ratio)) < 5 * sigma);
    // The mask is the documented Philox stream of the seed attribute.
    for (int64_t i = 0; i < n; i += 97) {
      CHECK((m[i] != 0) ==
            DropoutKeep(1234, static_cast<uint64_t>(i), DropoutKeepProbability(static_cast<float>(ratio))));
    }
  }
}

TEST_CASE("Dropout masks are reproducible: same inputs and seed give the same mask", "[training][kernels]") {
  const auto x = Ramp(257);
  auto a = MustRun(OnnxDropout(x, {257}, 0.5, true, 99));
  auto b = MustRun(OnnxDropout(x, {257}, 0.5, true, 99));
  CHECK(Values(a[1]) == Values(b[1]));
  CHECK(Values(a[0]) == Values(b[0]));
  auto c = MustRun(OnnxDropout(x, {257}, 0.5, true, 100));
  CHECK(Values(a[1]) != Values(c[1]));

  // Without a seed attribute: run seed + output name; the run seed matters, a recompute clone
  // ("<name>_recompute") draws the same mask as the original.
  auto no_seed = [&](const std::string& name, uint64_t run_seed) {
    KernelCall call = OnnxDropout(x, {257}, 0.5, true, std::nullopt);
    call.OutputName(0, name);
    return Values(MustRun(call, run_seed)[1]);
  };
  CHECK(no_seed("d_out", 5) == no_seed("d_out", 5));
  CHECK(no_seed("d_out", 5) != no_seed("d_out", 6));
  CHECK(no_seed("d_out", 5) != no_seed("other_out", 5));
  CHECK(no_seed("d_out", 5) == no_seed("d_out_recompute", 5));
}

TEST_CASE("Dropout inference mode and ratio 0 are the identity with an all-true mask", "[training][kernels]") {
  const auto x = Ramp(10);
  for (auto [ratio, training] : {std::pair{0.5, false}, std::pair{0.0, true}}) {
    auto out = MustRun(OnnxDropout(x, {2, 5}, ratio, training, 3));
    CheckClose(out[0], Values(F32({10}, x)), 0, 0);
    for (double m : Values(out[1])) CHECK(m == 1.0);
    CHECK(out[0].shape() == std::vector<int64_t>{2, 5});
  }
  // Opset 10 (inference only, attribute ratio) and no optional inputs at opset 13.
  KernelCall old("", "Dropout", 2);
  old.Version(10).Input(F32({10}, x)).Float("ratio", 0.3f);
  auto o = MustRun(old);
  CheckClose(o[0], Values(F32({10}, x)), 0, 0);
  REQUIRE(o[1].dtype() == DataType::kBool);
  KernelCall bare("", "Dropout", 1);
  bare.Version(13).Input(F32({10}, x));
  CheckClose(MustRun(bare)[0], Values(F32({10}, x)), 0, 0);
  // Opset 7 returns a mask of the data type.
  KernelCall v7("", "Dropout", 2);
  v7.Version(7).Input(F32({10}, x));
  REQUIRE(MustRun(v7)[1].dtype() == DataType::kFloat);
}

TEST_CASE("Dropout is random only in training mode with ratio > 0", "[training][kernels]") {
  const auto x = Ramp(4);
  CHECK(OnnxDropout(x, {4}, 0.5, true, 0).IsRandom());
  CHECK_FALSE(OnnxDropout(x, {4}, 0.0, true, 0).IsRandom());
  CHECK_FALSE(OnnxDropout(x, {4}, 0.5, false, 0).IsRandom());
  KernelCall bare("", "Dropout", 1);
  bare.Version(13).Input(F32({4}, x));
  CHECK_FALSE(bare.IsRandom());
  KernelCall old("", "Dropout", 1);
  old.Version(11).Input(F32({4}, x)).Float("ratio", 0.2f);
  CHECK_FALSE(old.IsRandom());
}

TEST_CASE("Dropout runs in float16, bfloat16 and double", "[training][kernels]") {
  const auto x = Ramp(64, -1.0);
  for (DataType dt : {DataType::kFloat16, DataType::kBfloat16, DataType::kDouble}) {
    KernelCall call("", "Dropout", 2);
    call.Version(13).Input(MakeTensor(dt, {64}, x)).Input(Scalar(DataType::kFloat, 0.5)).Input(BoolScalar(true));
    call.Int("seed", 8);
    auto out = MustRun(call);
    REQUIRE(out[0].dtype() == dt);
    const auto in = Values(MakeTensor(dt, {64}, x));
    const auto y = Values(out[0]), m = Values(out[1]);
    std::vector<double> expect(64);
    for (size_t i = 0; i < 64; ++i) expect[i] = m[i] != 0 ? in[i] * 2 : 0.0;
    CheckClose(y, expect, 0, 0);  // * 2 is exact in every format
  }
}

TEST_CASE("BitmaskDropout packs the same mask as Dropout into uint32 words", "[training][kernels]") {
  const int64_t n = 70;  // 3 words, 6 bits used in the last
  const auto x = Ramp(n);
  auto bool_out = MustRun(OnnxDropout(x, {n}, 0.4, true, 77));
  KernelCall call(kMs, "BitmaskDropout", 2);
  call.Input(F32({n}, x)).Input(Scalar(DataType::kFloat, 0.4)).Input(BoolScalar(true)).Int("seed", 77);
  auto out = MustRun(call);
  REQUIRE(out[1].dtype() == DataType::kUint32);
  REQUIRE(out[1].shape() == std::vector<int64_t>{3});
  const uint32_t* words = out[1].data<uint32_t>();
  const auto m = Values(bool_out[1]);
  for (int64_t i = 0; i < n; ++i) CHECK(((words[i / 32] >> (i % 32)) & 1u) == (m[i] != 0 ? 1u : 0u));
  CHECK((words[2] >> 6) == 0u);  // padding bits are 0
  CHECK(Values(out[0]) == Values(bool_out[0]));
  CHECK(call.IsRandom());

  // Inference: copy and all-ones words.
  KernelCall inference(kMs, "BitmaskDropout", 2);
  inference.Input(F32({n}, x)).Input(Scalar(DataType::kFloat, 0.4));
  auto inf = MustRun(inference);
  for (int w = 0; w < 3; ++w) CHECK(inf[1].data<uint32_t>()[w] == 0xFFFFFFFFu);
  CheckClose(inf[0], Values(F32({n}, x)), 0, 0);
  CHECK_FALSE(inference.IsRandom());
}

TEST_CASE("BiasDropout and BitmaskBiasDropout add bias, drop, then add the residual", "[training][kernels]") {
  const auto x = Ramp(12);
  const std::vector<double> bias = {1.0, -1.0, 0.5};
  const auto residual = Ramp(12, 10.0);
  auto make = [&](const char* op, bool training) {
    KernelCall call(kMs, op, 2);
    call.Input(F32({4, 3}, x)).Input(F32({3}, bias)).Input(F32({4, 3}, residual));
    call.Input(Scalar(DataType::kFloat, 0.5)).Input(BoolScalar(training)).Int("seed", 5);
    return call;
  };
  auto out = MustRun(make("BiasDropout", true));
  const auto y = Values(out[0]), m = Values(out[1]);
  std::vector<double> expect(12);
  for (size_t i = 0; i < 12; ++i) {
    const double xb = static_cast<float>(static_cast<float>(x[i]) + static_cast<float>(bias[i % 3]));
    expect[i] = (m[i] != 0 ? xb * 2.0 : 0.0) + static_cast<float>(residual[i]);
  }
  CheckClose(y, expect, 1e-6, 1e-6);
  // Same seed, same mask bits in the bit-packed variant.
  auto packed = MustRun(make("BitmaskBiasDropout", true));
  const uint32_t word = packed[1].data<uint32_t>()[0];
  for (size_t i = 0; i < 12; ++i) CHECK(((word >> i) & 1u) == (m[i] != 0 ? 1u : 0u));
  CheckClose(packed[0], y, 0, 0);
  // training_mode false: pure adds.
  auto plain = MustRun(make("BiasDropout", false));
  for (size_t i = 0; i < 12; ++i) {
    expect[i] = static_cast<float>(static_cast<float>(x[i]) + static_cast<float>(bias[i % 3])) +
                static_cast<float>(residual[i]);
  }
  CheckClose(plain[0], expect, 1e-6, 1e-6);
  for (double v : Values(plain[1])) CHECK(v == 1.0);
}

TEST_CASE("DropoutGrad and BitmaskDropoutGrad scale kept gradients", "[training][kernels]") {
  const std::vector<double> dy = {1, 2, 3, 4, 5};
  const std::vector<double> mask = {1, 0, 1, 1, 0};
  KernelCall grad(kMs, "DropoutGrad");
  grad.Input(F32({5}, dy)).Input(MakeTensor(DataType::kBool, {5}, mask)).Input(Scalar(DataType::kFloat, 0.2));
  CheckClose(MustRun(grad)[0], {1.25, 0, 3.75, 5, 0});
  // ratio defaults to 0.5.
  KernelCall grad_default(kMs, "DropoutGrad");
  grad_default.Input(F32({5}, dy)).Input(MakeTensor(DataType::kBool, {5}, mask));
  CheckClose(MustRun(grad_default)[0], {2, 0, 6, 8, 0});
  // training_mode given and false: the forward did not scale.
  KernelCall grad_eval(kMs, "DropoutGrad");
  grad_eval.Input(F32({5}, dy)).Input(MakeTensor(DataType::kBool, {5}, mask)).Input(Scalar(DataType::kFloat, 0.2));
  grad_eval.Input(BoolScalar(false));
  CheckClose(MustRun(grad_eval)[0], {1, 0, 3, 4, 0});

  Tensor words(DataType::kUint32, {1});
  words.data<uint32_t>()[0] = 0b01101u;
  KernelCall bgrad(kMs, "BitmaskDropoutGrad");
  bgrad.Input(F32({5}, dy)).Input(words).Input(Scalar(DataType::kFloat, 0.2)).Input(BoolScalar(true));
  CheckClose(MustRun(bgrad)[0], {1.25, 0, 3.75, 5, 0});
  KernelCall bgrad_eval(kMs, "BitmaskDropoutGrad");
  bgrad_eval.Input(F32({5}, dy)).Input(words).Input(Scalar(DataType::kFloat, 0.2));
  CheckClose(MustRun(bgrad_eval)[0], {1, 0, 3, 4, 0});
  Tensor too_many(DataType::kUint32, {2});
  KernelCall bad(kMs, "BitmaskDropoutGrad");
  bad.Input(F32({5}, dy)).Input(too_many);
  REQUIRE_FALSE(bad.Run().ok());
}

TEST_CASE("Dropout then DropoutGrad round-trips the mask", "[training][kernels]") {
  const auto x = Ramp(33);
  auto fwd = MustRun(OnnxDropout(x, {33}, 0.3, true, 11));
  const std::vector<double> ones(33, 1.0);
  KernelCall grad(kMs, "DropoutGrad");
  grad.Input(F32({33}, ones)).Input(fwd[1]).Input(Scalar(DataType::kFloat, 0.3)).Input(BoolScalar(true));
  const auto dx = Values(MustRun(grad)[0]), m = Values(fwd[1]);
  for (size_t i = 0; i < 33; ++i) CHECK(std::abs(dx[i] - (m[i] != 0 ? 1 / 0.7 : 0.0)) < 1e-6);
}

TEST_CASE("Dropout rejects ratios outside 0..1", "[training][kernels]") {
  auto r = OnnxDropout(Ramp(4), {4}, 1.5, true, 1).Run();
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message().find("ratio") != std::string::npos);
}

}  // namespace
}  // namespace memopt::testing
