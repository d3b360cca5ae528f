// ops/dropout against the CPU reference: the bool and bit-packed masks must be identical bit
// for bit (same seed derivation, same Philox words), the data outputs equal within the type's
// rounding, for sizes that are not multiples of a Philox block (4) or a mask word (32), with the
// `seed` attribute and with the run seed mixed with the output name.
#include <algorithm>
#include <cstring>
#include <functional>
#include <string>

#include <catch2/catch.hpp>

#include "helpers/cuda_test_util.h"

namespace memopt::cuda {
namespace {

using memopt::testing::BoolScalar;
using memopt::testing::KernelCall;
using memopt::testing::Scalar;
using testing::MaxRelDiff;
using testing::RandomTensor;
using testing::TypeTol;

using testing::kFloatTypes;
const int64_t kSizes[] = {1, 7, 1023, 4097, 100003};
const float kRatios[] = {0.0f, 0.1f, 0.5f};
constexpr uint64_t kRunSeed = 0x5eed0123456789abull;

std::vector<int64_t> ShapeOf(int64_t n) {
  if (n == 4097) return {17, 241};  // a 2-D case: the mask follows the flat index
  return {n};
}

bool SameBits(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() &&
         (a.bytes() == 0 || std::memcmp(a.raw(), b.raw(), static_cast<size_t>(a.bytes())) == 0);
}

/// Runs `call` on both executors under `run_seed`: bool and uint32 outputs (the masks) must be
/// identical, the others within `tol`. Returns the CPU outputs.
std::vector<Tensor> CompareDropout(const KernelCall& call, double tol, uint64_t run_seed = kRunSeed) {
  auto cpu = call.Run(run_seed, nullptr, &KernelRegistry::Cpu());
  INFO("CPU: " << cpu.status().message());
  REQUIRE(cpu.ok());
  auto gpu = testing::RunOnGpu(call, false, run_seed);
  INFO("GPU: " << gpu.status().message());
  REQUIRE(gpu.ok());
  REQUIRE(cpu->size() == gpu->size());
  for (size_t i = 0; i < cpu->size(); ++i) {
    const Tensor& c = (*cpu)[i];
    const Tensor& g = (*gpu)[i];
    INFO("output " << i << ": " << (c.defined() ? c.Describe() : std::string("omitted")));
    REQUIRE(c.defined() == g.defined());
    if (!c.defined()) continue;
    if (c.dtype() == DataType::kBool || c.dtype() == DataType::kUint32) {
      CHECK(SameBits(c, g));
    } else {
      CHECK(MaxRelDiff(c, g) <= tol);
    }
  }
  return std::move(cpu).value();
}

/// Some element dropped: the case really ran in training mode (the comparison is not vacuous).
/// The last mask word is skipped (its padding bits are 0 whatever was kept).
bool SomeDropped(const Tensor& mask) {
  if (mask.dtype() == DataType::kUint32) {
    const uint32_t* w = mask.data<uint32_t>();
    return std::any_of(w, w + mask.numel() - 1, [](uint32_t v) { return v != 0xFFFFFFFFu; });
  }
  const uint8_t* m = mask.data<uint8_t>();
  return std::any_of(m, m + mask.numel(), [](uint8_t v) { return v == 0; });
}

/// Dropout-family node with ratio/training_mode at inputs (r, r+1); seed attribute when `seeded`,
/// else an output name unique to the case (the run-seed path).
void AddRatioAndSeed(KernelCall& call, float ratio, bool seeded, const std::string& name) {
  call.Input(Scalar(DataType::kFloat, ratio)).Input(BoolScalar(true));
  if (seeded) {
    call.Int("seed", static_cast<int64_t>(std::hash<std::string>{}(name) & 0x7fffffff) - 12345);
  } else {
    call.OutputName(0, name);
  }
}

TEST_CASE("cuda dropout: the registry lists the Dropout family (host side)", "[cuda]") {
  const auto names = CudaKernelRegistry::Builtin().OpNames();
  for (const char* op : {"Dropout", "com.microsoft::BitmaskDropout", "com.microsoft::BiasDropout",
                         "com.microsoft::BitmaskBiasDropout", "com.microsoft::DropoutGrad",
                         "com.microsoft::BitmaskDropoutGrad"}) {
    INFO(op);
    CHECK(std::find(names.begin(), names.end(), op) != names.end());
  }
}

TEST_CASE("cuda dropout: Dropout and BitmaskDropout masks match the CPU bit for bit", "[cuda][gpu]") {
  MEMOPT_SKIP_WITHOUT_GPU();
  uint32_t seed = 1;
  for (const char* op : {"Dropout", "BitmaskDropout"}) {
    const std::string domain = std::string(op) == "Dropout" ? "" : "com.microsoft";
    for (DataType t : kFloatTypes) {
      for (int64_t n : kSizes) {
        for (float ratio : kRatios) {
          for (bool seeded : {true, false}) {
            const std::string name = std::string(op) + "_" + std::to_string(n) + "_" + std::to_string(ratio);
            KernelCall call(domain, op, 2);
            call.Version(13).Input(RandomTensor(t, ShapeOf(n), seed++));
            AddRatioAndSeed(call, ratio, seeded, name);
            INFO(op << " " << call.inputs[0]->Describe() << " ratio " << ratio
                    << (seeded ? " seed attr" : " run seed"));
            const auto cpu = CompareDropout(call, TypeTol(t));
            if (ratio > 0.0f && n >= 1023) CHECK(SomeDropped(cpu[1]));
          }
        }
      }
    }
  }
}

TEST_CASE("cuda dropout: inference, defaults, omitted mask, empty and ratio 1", "[cuda][gpu]") {
  MEMOPT_SKIP_WITHOUT_GPU();
  uint32_t seed = 1000;
  for (const char* op : {"Dropout", "BitmaskDropout"}) {
    const std::string domain = std::string(op) == "Dropout" ? "" : "com.microsoft";
    for (DataType t : kFloatTypes) {
      for (int64_t n : {int64_t{7}, int64_t{4097}}) {
        const Tensor x = RandomTensor(t, ShapeOf(n), seed++);
        INFO(op << " " << x.Describe());
        {  // training_mode false: the data, every mask bit set (padding included)
          KernelCall call(domain, op, 2);
          call.Version(13).Input(x).Input(Scalar(DataType::kFloat, 0.5)).Input(BoolScalar(false));
          CompareDropout(call, 0.0);
        }
        {  // ratio and training_mode absent: inference
          KernelCall call(domain, op, 2);
          call.Version(13).Input(x);
          CompareDropout(call, 0.0);
        }
        {  // ratio absent (0.5), training on; float16 ratio
          KernelCall call(domain, op, 2);
          call.Version(13).Input(x).Input(std::nullopt).Input(BoolScalar(true));
          CompareDropout(call, TypeTol(t));
          KernelCall half_ratio(domain, op, 2);
          half_ratio.Version(13).Input(x).Input(Scalar(DataType::kFloat16, 0.25)).Input(BoolScalar(true));
          CompareDropout(half_ratio, TypeTol(t));
        }
        {  // mask output omitted
          KernelCall call(domain, op, 1);
          call.Version(13).Input(x).Input(Scalar(DataType::kFloat, 0.5)).Input(BoolScalar(true));
          CompareDropout(call, TypeTol(t));
        }
        {  // ratio 1 drops everything
          KernelCall call(domain, op, 2);
          call.Version(13).Input(x).Input(Scalar(DataType::kFloat, 1.0)).Input(BoolScalar(true));
          CompareDropout(call, 0.0);
        }
      }
      KernelCall empty(domain, op, 2);
      empty.Version(13).Input(RandomTensor(t, {0, 3}, seed++));
      empty.Input(Scalar(DataType::kFloat, 0.5)).Input(BoolScalar(true));
      CompareDropout(empty, 0.0);
    }
  }
  KernelCall bad("", "Dropout", 2);
  bad.Version(13).Input(RandomTensor(DataType::kFloat, {7}, 1));
  bad.Input(Scalar(DataType::kFloat, 1.5)).Input(BoolScalar(true));
  CHECK_FALSE(testing::RunOnGpu(bad, false, kRunSeed).ok());
}

TEST_CASE("cuda dropout: legacy ONNX Dropout opsets", "[cuda][gpu]") {
  MEMOPT_SKIP_WITHOUT_GPU();
  uint32_t seed = 2000;
  for (DataType t : kFloatTypes) {
    for (int64_t n : {int64_t{7}, int64_t{1023}}) {
      // Opset 6 in training (is_test 0): mask of the data type; then is_test 1, opsets 7 and 10.
      KernelCall train("", "Dropout", 2);
      train.Version(6).Float("ratio", 0.3f).Int("seed", 77).Input(RandomTensor(t, {n}, seed++));
      const auto cpu = CompareDropout(train, TypeTol(t));
      REQUIRE(cpu[1].dtype() == t);
      for (int version : {6, 7, 10}) {
        KernelCall call("", "Dropout", 2);
        call.Version(version).Float("ratio", 0.3f).Input(RandomTensor(t, {n}, seed++));
        if (version == 6) call.Int("is_test", 1);
        INFO("opset " << version);
        CompareDropout(call, 0.0);
      }
    }
  }
}

TEST_CASE("cuda dropout: BiasDropout and BitmaskBiasDropout match the CPU", "[cuda][gpu]") {
  MEMOPT_SKIP_WITHOUT_GPU();
  const std::vector<std::vector<int64_t>> shapes = {{1, 1}, {3, 7}, {2, 1023}, {1, 4097}, {3, 33335}};
  uint32_t seed = 3000;
  for (const char* op : {"BiasDropout", "BitmaskBiasDropout"}) {
    for (DataType t : kFloatTypes) {
      for (const auto& shape : shapes) {
        for (float ratio : kRatios) {
          for (bool residual : {false, true}) {
            for (bool seeded : {true, false}) {
              const std::string name = std::string(op) + "_" + std::to_string(shape[1]) + "_" + std::to_string(ratio) +
                                       (residual ? "_res" : "");
              KernelCall call("com.microsoft", op, 2);
              call.Input(RandomTensor(t, shape, seed++));
              call.Input(RandomTensor(t, {shape[1]}, seed++));
              call.Input(residual ? std::optional<Tensor>(RandomTensor(t, shape, seed++)) : std::nullopt);
              AddRatioAndSeed(call, ratio, seeded, name);
              INFO(op << " " << call.inputs[0]->Describe() << " ratio " << ratio << (residual ? " residual" : "")
                      << (seeded ? " seed attr" : " run seed"));
              const auto cpu = CompareDropout(call, TypeTol(t));
              if (ratio > 0.0f && shape[0] * shape[1] >= 1023) CHECK(SomeDropped(cpu[1]));
            }
          }
        }
        // Inference: data + bias (+ residual), full mask.
        KernelCall call("com.microsoft", op, 2);
        call.Input(RandomTensor(t, shape, seed++));
        call.Input(RandomTensor(t, {shape[1]}, seed++));
        call.Input(RandomTensor(t, shape, seed++)).Input(Scalar(DataType::kFloat, 0.5)).Input(BoolScalar(false));
        CompareDropout(call, TypeTol(t));
      }
    }
  }
}

TEST_CASE("cuda dropout: DropoutGrad and BitmaskDropoutGrad with the forward's masks", "[cuda][gpu]") {
  MEMOPT_SKIP_WITHOUT_GPU();
  uint32_t seed = 4000;
  for (bool bitmask : {false, true}) {
    const char* fwd_op = bitmask ? "BitmaskDropout" : "Dropout";
    const char* grad_op = bitmask ? "BitmaskDropoutGrad" : "DropoutGrad";
    for (DataType t : kFloatTypes) {
      for (int64_t n : kSizes) {
        for (float ratio : kRatios) {
          KernelCall fwd(bitmask ? "com.microsoft" : "", fwd_op, 2);
          fwd.Version(13).Input(RandomTensor(t, ShapeOf(n), seed++));
          AddRatioAndSeed(fwd, ratio, false, std::string(fwd_op) + "_" + std::to_string(n));
          const auto out = CompareDropout(fwd, TypeTol(t));  // the GPU mask equals this one
          const Tensor& mask = out[1];
          const Tensor dy = RandomTensor(t, ShapeOf(n), seed++);
          INFO(grad_op << " " << dy.Describe() << " ratio " << ratio);
          // ratio and training_mode given; training_mode false; both absent (the op's defaults).
          KernelCall grad("com.microsoft", grad_op);
          grad.Input(dy).Input(mask).Input(Scalar(DataType::kFloat, ratio)).Input(BoolScalar(true));
          CompareDropout(grad, TypeTol(t));
          KernelCall inference("com.microsoft", grad_op);
          inference.Input(dy).Input(mask).Input(Scalar(DataType::kFloat, ratio)).Input(BoolScalar(false));
          CompareDropout(inference, TypeTol(t));
          KernelCall defaults("com.microsoft", grad_op);
          defaults.Input(dy).Input(mask);
          CompareDropout(defaults, TypeTol(t));
        }
      }
    }
  }
}

TEST_CASE("cuda dropout: run seed and output name select the mask; _recompute draws the forward's", "[cuda][gpu]") {
  MEMOPT_SKIP_WITHOUT_GPU();
  const Tensor x = RandomTensor(DataType::kFloat, {4097}, 5000);
  auto mask_of = [&](const std::string& name, uint64_t run_seed) {
    KernelCall call("", "Dropout", 2);
    call.Version(13).Input(x).Input(Scalar(DataType::kFloat, 0.5)).Input(BoolScalar(true)).OutputName(0, name);
    auto out = testing::RunOnGpu(call, false, run_seed);
    INFO(out.status().message());
    REQUIRE(out.ok());
    return (*out)[1];
  };
  const Tensor base = mask_of("h", 1);
  CHECK(SameBits(base, mask_of("h_recompute", 1)));
  CHECK_FALSE(SameBits(base, mask_of("h2", 1)));
  CHECK_FALSE(SameBits(base, mask_of("h", 2)));
}

}  // namespace
}  // namespace memopt::cuda
