// Helpers of the [cuda] tests: skip (with the probe's reason) where no GPU is usable, random
// non-zero inputs, running one node on the GPU and on the CPU reference, and comparing.
#pragma once

#include <cmath>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "cuda_kernel.h"
#include "device.h"
#include "exec/kernel.h"
#include "helpers/training_test_util.h"
#include "test_skip.h"

namespace memopt::cuda::testing {

/// "" when device 0 is usable, else the reason (probed once per test binary).
inline const std::string& NoGpuReason() {
  static const std::string reason = [] {
    auto info = ProbeDevice(0);
    return info.ok() ? std::string() : info.status().message();
  }();
  return reason;
}

/// At the top of a [cuda] test case, before any assertion: returns, marking the test case
/// skipped (test_skip.h; ctest: "Skipped"), when there is no GPU.
#define MEMOPT_SKIP_WITHOUT_GPU()                                             \
  do {                                                                        \
    if (!::memopt::cuda::testing::NoGpuReason().empty()) {                    \
      ::memopt::testing::MarkSkipped(::memopt::cuda::testing::NoGpuReason()); \
      return;                                                                 \
    }                                                                         \
  } while (0)

/// The float types every GPU kernel handles (each test runs in all three).
inline constexpr DataType kFloatTypes[] = {DataType::kFloat, DataType::kFloat16, DataType::kBfloat16};

/// Random values in +-[0.25, 2] (never zero: Div and the gradients stay well defined).
inline Tensor RandomTensor(DataType dtype, std::vector<int64_t> shape, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> mag(0.25, 2.0);
  Tensor t(dtype, std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i) t.SetFromDouble(i, (gen() & 1) ? mag(gen) : -mag(gen));
  return t;
}

/// Runs `call`'s node with the built-in CUDA kernel under `run_seed`, with the value names the CPU
/// run sees (KernelCall::Names: the Dropout seed derives from output 0's name); outputs
/// downloaded, omitted ones left undefined as on the CPU.
inline Expected<std::vector<Tensor>> RunOnGpu(const memopt::testing::KernelCall& call, bool allow_tf32 = false,
                                              uint64_t run_seed = 0) {
  MEMOPT_ASSIGN_OR_RETURN(auto pool, DevicePool::Create());
  MEMOPT_ASSIGN_OR_RETURN(CublasPtr cublas, CreateCublas(pool->stream()));
  const CudaKernelFn fn = CudaKernelRegistry::Builtin().Find(call.node.domain, call.node.op_type);
  if (fn == nullptr) return Unsupported("no CUDA kernel for " + call.node.op_type);
  std::vector<std::optional<DeviceTensor>> device_inputs;
  CudaKernelContext ctx;
  ctx.node = &call.node;
  ctx.pool = pool;
  ctx.cublas = cublas.get();
  ctx.allow_tf32 = allow_tf32;
  ctx.run_seed = run_seed;
  const Graph names = call.Names();
  ctx.graph = &names;
  device_inputs.reserve(call.inputs.size());
  for (const auto& t : call.inputs) {
    if (!t.has_value()) {
      device_inputs.emplace_back();
      continue;
    }
    MEMOPT_ASSIGN_OR_RETURN(DeviceTensor d, DeviceTensor::Upload(pool, *t));
    device_inputs.emplace_back(std::move(d));
  }
  for (const auto& d : device_inputs) ctx.inputs.push_back(d.has_value() ? &*d : nullptr);
  ctx.outputs.resize(call.node.outputs.size());
  MEMOPT_RETURN_IF_ERROR(fn(ctx));
  MEMOPT_RETURN_IF_ERROR(pool->Synchronize());
  std::vector<Tensor> out(ctx.outputs.size());
  for (size_t i = 0; i < ctx.outputs.size(); ++i) {
    if (!ctx.outputs[i].defined()) continue;
    MEMOPT_ASSIGN_OR_RETURN(out[i], ctx.outputs[i].Download());
  }
  return out;
}

/// Largest |gpu - cpu| / max(1, |cpu|) over all elements; shapes and types must agree. A NaN on
/// one side only, or infinities that differ, count as an infinite difference (std::max would
/// silently drop a NaN difference); NaN on both sides and equal infinities agree.
inline double MaxRelDiff(const Tensor& cpu, const Tensor& gpu) {
  REQUIRE(cpu.dtype() == gpu.dtype());
  REQUIRE(cpu.shape() == gpu.shape());
  double worst = 0;
  for (int64_t i = 0; i < cpu.numel(); ++i) {
    const double c = cpu.GetAsDouble(i), g = gpu.GetAsDouble(i);
    if (std::isnan(c) || std::isnan(g) || std::isinf(c) || std::isinf(g)) {
      const bool same = (std::isnan(c) && std::isnan(g)) || c == g;
      if (!same) return INFINITY;
      continue;
    }
    worst = std::max(worst, std::fabs(g - c) / std::max(1.0, std::fabs(c)));
  }
  return worst;
}

/// Runs `call` on the CPU reference (KernelRegistry::Cpu()) and the GPU and requires every
/// output to agree within `tol` (MaxRelDiff).
inline void CompareWithCpu(const memopt::testing::KernelCall& call, double tol) {
  auto cpu = call.Run(0, nullptr, &KernelRegistry::Cpu());
  INFO("CPU: " << cpu.status().message());
  REQUIRE(cpu.ok());
  auto gpu = RunOnGpu(call);
  INFO("GPU: " << gpu.status().message());
  REQUIRE(gpu.ok());
  REQUIRE(cpu->size() == gpu->size());
  for (size_t i = 0; i < cpu->size(); ++i) {
    INFO("output " << i << ": " << (*cpu)[i].Describe());
    CHECK(MaxRelDiff((*cpu)[i], (*gpu)[i]) <= tol);
  }
}

/// Tolerance of a float type's own rounding (results computed in float, rounded on store, may
/// differ by one unit in the last place from the CPU where the math functions differ).
inline double TypeTol(DataType t) {
  switch (t) {
    case DataType::kFloat16: return 1.0 / 1024;
    case DataType::kBfloat16: return 1.0 / 128;
    default: return 1e-5;
  }
}

}  // namespace memopt::cuda::testing
