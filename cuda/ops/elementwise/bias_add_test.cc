// The BiasAdd CUDA kernel against the CPU kernel, bit for bit (both add in float in the same order
// and round once), on random non-zero inputs in float32, float16 and bfloat16: channel counts that
// fill whole 16-byte packs and ones that do not, one row and many; the decode's errors on the GPU
// path. Skipped with the probe's reason where no GPU is usable.
#include <catch2/catch.hpp>

#include "helpers/cuda_test_util.h"

namespace memopt::cuda {
namespace {

using memopt::testing::KernelCall;
using testing::CompareWithCpu;
using testing::RandomTensor;

TEST_CASE("cuda elementwise: BiasAdd matches the CPU bit for bit", "[cuda][gpu]") {
  MEMOPT_SKIP_WITHOUT_GPU();
  uint32_t seed = 500;
  const std::vector<std::vector<int64_t>> shapes = {{1, 1, 1}, {2, 7, 3}, {2, 64, 320}, {1, 33, 1280}, {3, 5, 9}};
  for (DataType t : testing::kFloatTypes) {
    for (const auto& shape : shapes) {
      KernelCall call("com.microsoft", "BiasAdd");
      call.Input(RandomTensor(t, shape, seed++));
      call.Input(RandomTensor(t, {shape[2]}, seed++));
      call.Input(RandomTensor(t, shape, seed++));
      INFO(call.inputs[0]->Describe());
      CompareWithCpu(call, 0.0);
    }
  }
}

TEST_CASE("cuda elementwise: BiasAdd reports a bias of the wrong length like the CPU", "[cuda][gpu]") {
  MEMOPT_SKIP_WITHOUT_GPU();
  KernelCall call("com.microsoft", "BiasAdd");
  call.Input(RandomTensor(DataType::kFloat, {2, 3, 4}, 1));
  call.Input(RandomTensor(DataType::kFloat, {5}, 2));
  call.Input(RandomTensor(DataType::kFloat, {2, 3, 4}, 3));
  auto cpu = call.Run(0, nullptr, &KernelRegistry::Cpu());
  auto gpu = testing::RunOnGpu(call);
  REQUIRE_FALSE(cpu.ok());
  REQUIRE_FALSE(gpu.ok());
  CHECK_THAT(gpu.status().message(), Catch::Contains("bias [5] must be 1-D with X's channel count 4"));
  CHECK(cpu.status().message() == gpu.status().message());
}

}  // namespace
}  // namespace memopt::cuda
