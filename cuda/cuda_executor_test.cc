// The CUDA executor on a tiny graph against memopt's CPU Execute: same outputs (within float
// tolerance), same live-bytes statistics, and the pool's measured peak of requested bytes equal
// to the static rules' peak. CheckSupported runs everywhere (it needs no GPU).
#include <catch2/catch.hpp>

#include "helpers/analysis_test_util.h"
#include "cuda_executor.h"
#include "helpers/cuda_test_util.h"

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
  // Range has no CUDA kernel but reads only int64 tensors: it runs on the host, so it is not listed.
  Model m = memopt::testing::TextModel(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[4] x, int64 s, int64 l, int64 d) => (float[4] y, int64[3] r) {
      a = Relu(x)
      b = Sin(a)
      c = Tanh(b)
      y = Sin(c)
      r = Range(s, l, d)
    })",
                                       {"relu", "sin1", "tanh", "sin2", "range"});
  Status s = CheckSupported(m.graph, CudaKernelRegistry::Builtin());
  REQUIRE_FALSE(s.ok());
  CHECK(s.code() == ErrorCode::kUnsupported);
  CHECK(s.message() == "unsupported ops on the GPU: Sin (node 'sin1'), Tanh (node 'tanh')");
}

struct TinyRun {
  Model model;
  std::map<std::string, Tensor> feeds;
};

TinyRun TinyGraph() {
  TinyRun t{memopt::testing::TextModel(kGraph, {"matmul", "biasgelu", "relu", "mul", "gelugrad"}), {}};
  t.feeds = {{"x", testing::RandomTensor(DataType::kFloat, {7, 8}, 1)},
             {"w", testing::RandomTensor(DataType::kFloat, {8, 16}, 2)},
             {"b", testing::RandomTensor(DataType::kFloat, {16}, 3)}};
  return t;
}

TEST_CASE("cuda executor: the tiny graph runs on the CPU; without a GPU ExecuteCuda is an error (host side)",
          "[cuda]") {
  const TinyRun t = TinyGraph();
  auto cpu = Execute(t.model, t.feeds);
  INFO(cpu.status().message());
  REQUIRE(cpu.ok());
  if (!testing::NoGpuReason().empty()) {
    auto none = ExecuteCuda(t.model, t.feeds);  // an error Status, never a crash
    REQUIRE_FALSE(none.ok());
    CHECK(none.status().code() == ErrorCode::kNoDevice);
  }
}

TEST_CASE("cuda executor: a tiny graph matches the CPU executor, peak included", "[cuda][gpu]") {
  MEMOPT_SKIP_WITHOUT_GPU();
  const TinyRun t = TinyGraph();
  const Model& m = t.model;
  const std::map<std::string, Tensor>& feeds = t.feeds;
  auto cpu = Execute(m, feeds);
  INFO(cpu.status().message());
  REQUIRE(cpu.ok());
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

// Shape arithmetic (Shape -> Gather -> Unsqueeze -> Concat -> Reshape) runs on the host from
// the mirrors of the small int64 tensors; the float data stays on the device and Reshape makes a
// view of it, so the pool's requested peak is below the static rules' (which count views).
Model ShapeGraph() {
  return memopt::testing::TextModel(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[N, 6] x, int64[1] zero) => (float[M, 3] y, int64[2] shp) {
      s = Shape(x)
      n = Gather(s, zero)
      two = Constant<value = int64[1] {2}>()
      three = Constant<value = int64[1] {3}>()
      n2 = Mul(n, two)
      shp = Concat<axis = 0>(n2, three)
      r = Reshape(x, shp)
      y = Relu(r)
    })",
                                    {"shape", "gather", "c2", "c3", "mul", "concat", "reshape", "relu"});
}

std::map<std::string, Tensor> ShapeFeeds() {
  return {{"x", testing::RandomTensor(DataType::kFloat, {5, 6}, 4)}, {"zero", Tensor(DataType::kInt64, {1})}};
}

TEST_CASE("cuda executor: the shape-subgraph graph runs on the CPU and every op is supported (host side)",
          "[cuda]") {
  const Model m = ShapeGraph();
  auto cpu = Execute(m, ShapeFeeds());
  INFO(cpu.status().message());
  REQUIRE(cpu.ok());
  CHECK(CheckSupported(m.graph, CudaKernelRegistry::Builtin()).ok());
}

TEST_CASE("cuda executor: shape subgraphs run on the host, views share blocks", "[cuda][gpu]") {
  MEMOPT_SKIP_WITHOUT_GPU();
  const Model m = ShapeGraph();
  const std::map<std::string, Tensor> feeds = ShapeFeeds();
  auto cpu = Execute(m, feeds);
  INFO(cpu.status().message());
  REQUIRE(cpu.ok());
  auto gpu = ExecuteCuda(m, feeds);
  INFO(gpu.status().message());
  REQUIRE(gpu.ok());
  CHECK(gpu->outputs.at("shp").ToInt64Vector() == std::vector<int64_t>{10, 3});
  CHECK(testing::MaxRelDiff(cpu->outputs.at("y"), gpu->outputs.at("y")) == 0);
  CHECK(gpu->memory.peak_bytes == cpu->memory.peak_bytes);
  CHECK(gpu->pool.peak_requested <= cpu->memory.peak_bytes);  // r is a view of x
}

TEST_CASE("cuda executor: outputs from the arena, bit for bit as from the pool alone", "[cuda][gpu]") {
  MEMOPT_SKIP_WITHOUT_GPU();
  // The plan fixtures exercise views kept, moved and copied out of the arena (exec/arena_slots.h).
  for (const TinyRun& run : {TinyGraph(), TinyRun{ShapeGraph(), ShapeFeeds()}}) {
    const Model& m = run.model;
    const std::map<std::string, Tensor>& feeds = run.feeds;
    auto plan = PlanRunArena(m, feeds);
    INFO(plan.status().message());
    REQUIRE(plan.ok());
    CudaRunOptions with, without;
    auto pool = DevicePool::Create();
    REQUIRE(pool.ok());
    with.pool = *pool;
    with.arena = *plan;
    auto a = ExecuteCuda(m, feeds, with);
    INFO(a.status().message());
    REQUIRE(a.ok());
    auto again = ExecuteCuda(m, feeds, with);  // the same device memory, slots afresh
    REQUIRE(again.ok());
    without.plan_arena = false;
    auto other = DevicePool::Create();
    REQUIRE(other.ok());
    without.pool = *other;
    auto b = ExecuteCuda(m, feeds, without);
    REQUIRE(b.ok());
    CHECK(b->arena.arena_bytes == 0);
    CHECK(a->arena.arena_bytes == (*plan)->arena_bytes);
    CHECK(a->arena.in_slot + a->arena.views_kept + a->arena.moved > 0);
    CHECK(again->arena.in_slot == a->arena.in_slot);
    for (const auto& [name, t] : b->outputs) {
      INFO(name);
      CHECK(testing::MaxRelDiff(t, a->outputs.at(name)) == 0);
      CHECK(testing::MaxRelDiff(t, again->outputs.at(name)) == 0);
    }
    CHECK(a->pool.peak_requested <= b->pool.peak_requested);
    CHECK(a->pool.peak_reserved >= (*plan)->arena_bytes);
  }
}

}  // namespace
}  // namespace memopt::cuda
