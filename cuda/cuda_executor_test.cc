// The CUDA executor on a tiny graph against memopt's CPU Execute: same outputs (within float
// tolerance), same live-bytes statistics, and the pool's measured peak of requested bytes equal
// to the static rules' peak. CheckSupported runs everywhere (it needs no GPU).
#include <catch2/catch.hpp>

#include "analysis/analysis_test_util.h"
#include "cuda_executor.h"
#include "cuda_test_util.h"

namespace memopt::cuda {
namespace {

constexpr const char* kGraph = R"(
    <ir_version: 8, opset_import: ["" : 17, "com.microsoft" : 1]>
    g (float[N, 8] x, float[8, 16] w, float[16] b) => (float[N, 16] out, float[N, 16] dx) {
      h = MatMul(x, w)
      a = com.microsoft.BiasGelu(h, b)
      r = Relu(a)
      out = Mul(r, h)
      dx = com.microsoft.GeluGrad(out, a)
    })";

TEST_CASE("cuda executor: CheckSupported names every op without a GPU kernel (host side)", "[cuda]") {
  Model m = memopt::testing::TextModel(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[4] x) => (float[4] y) {
      a = Relu(x)
      b = Softmax(a)
      c = Tanh(b)
      y = Softmax(c)
    })",
                                       {"relu", "sm1", "tanh", "sm2"});
  Status s = CheckSupported(m.graph, CudaKernelRegistry::Builtin());
  REQUIRE_FALSE(s.ok());
  CHECK(s.code() == ErrorCode::kUnsupported);
  CHECK(s.message() == "unsupported ops on the GPU: Softmax (node 'sm1'), Tanh (node 'tanh')");
}

TEST_CASE("cuda executor: a tiny graph matches the CPU executor, peak included", "[cuda][gpu]") {
  Model m = memopt::testing::TextModel(kGraph, {"matmul", "biasgelu", "relu", "mul", "gelugrad"});
  std::map<std::string, Tensor> feeds = {{"x", testing::RandomTensor(DataType::kFloat, {7, 8}, 1)},
                                         {"w", testing::RandomTensor(DataType::kFloat, {8, 16}, 2)},
                                         {"b", testing::RandomTensor(DataType::kFloat, {16}, 3)}};
  auto cpu = Execute(m, feeds);
  INFO(cpu.status().message());
  REQUIRE(cpu.ok());  // the graph and the CPU side are checked even without a GPU
  if (!testing::NoGpuReason().empty()) {
    auto none = ExecuteCuda(m, feeds);  // an error Status, never a crash
    REQUIRE_FALSE(none.ok());
    CHECK(none.status().code() == ErrorCode::kNoDevice);
  }
  MEMOPT_SKIP_WITHOUT_GPU();
  auto gpu = ExecuteCuda(m, feeds);
  INFO(gpu.status().message());
  REQUIRE(gpu.ok());
  for (const char* name : {"out", "dx"}) {
    INFO(name);
    REQUIRE(gpu->outputs.count(name) == 1);
    CHECK(testing::MaxRelDiff(cpu->outputs.at(name), gpu->outputs.at(name)) <= 1e-4);
  }
  CHECK(gpu->memory.peak_bytes == cpu->memory.peak_bytes);
  CHECK(gpu->memory.peak_position == cpu->memory.peak_position);
  CHECK(gpu->memory.live_at_peak == cpu->memory.live_at_peak);
  CHECK(gpu->pool.peak_requested == cpu->memory.peak_bytes);
  CHECK(gpu->pool.peak_reserved >= gpu->pool.peak_requested);
  CHECK(gpu->step_ms >= 0);

  // A second run in the same pool reuses its cached blocks and measures the same peak.
  CudaRunOptions options;
  auto pool = DevicePool::Create();
  REQUIRE(pool.ok());
  options.pool = *pool;
  auto first = ExecuteCuda(m, feeds, options);
  REQUIRE(first.ok());
  auto second = ExecuteCuda(m, feeds, options);
  REQUIRE(second.ok());
  CHECK(second->pool.peak_requested == cpu->memory.peak_bytes);
  CHECK(second->pool.raw_allocations == first->pool.raw_allocations);
  CHECK(second->pool.reuses > first->pool.reuses);
}

}  // namespace
}  // namespace memopt::cuda
