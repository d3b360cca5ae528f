// The executor's arena (exec/arena_plan.h, exec/arena_allocator.h): the same outputs, bit for
// bit, and the same measured peak as with the buffer pool alone; no two live values sharing a
// byte; the outputs of a run kept intact while another runs; the pool whenever the arena cannot
// be used.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>

#include "helpers/analysis_test_util.h"
#include "analysis/peak_estimate.h"
#include "exec/arena_allocator.h"
#include "exec/buffer_pool.h"
#include "exec/executor.h"
#include "exec/input_binding.h"
#include "exec/kernels/kernel_util.h"
#include "exec/random_inputs.h"
#include "test_data.h"

namespace memopt {
namespace {

struct Fixture {
  std::string file;
  std::string dims;
};

const std::vector<Fixture>& PlanFixtures() {
  static const std::vector<Fixture> fixtures = {
      {"src:tests/data/plan/gpt2_tiny_2layer.onnx", "batch=4,seq_len=64"},
      {"src:tests/data/plan/gpt_synth_1layer.onnx", "batch=2,seq_len=32"},
      {"src:tests/data/plan/convnet_bn_train.onnx", "batch=4"},
      {"src:tests/data/plan/convnet_residual_train.onnx", ""},
      {"src:tests/data/plan/relu_mlp_train.onnx", "batch=4"},
      {"src:tests/data/plan/tanh_mlp_train.onnx", ""},
      {"src:tests/data/plan/peak_raising_level1.onnx", ""},
  };
  return fixtures;
}

void CheckSameOutputs(const std::map<std::string, Tensor>& a, const std::map<std::string, Tensor>& b) {
  REQUIRE(a.size() == b.size());
  for (const auto& [name, ta] : a) {
    INFO("output " << name);
    REQUIRE(b.count(name) == 1);
    const Tensor& tb = b.at(name);
    REQUIRE(ta.dtype() == tb.dtype());
    REQUIRE(ta.shape() == tb.shape());
    if (ta.dtype() == DataType::kString) {
      CHECK(ta.strings() == tb.strings());
    } else if (ta.bytes() > 0) {
      CHECK(std::memcmp(ta.raw(), tb.raw(), static_cast<size_t>(ta.bytes())) == 0);
    }
  }
}

void CheckSameMemory(const MemoryStats& a, const MemoryStats& b) {
  CHECK(a.peak_bytes == b.peak_bytes);
  CHECK(a.peak_position == b.peak_position);
  CHECK(a.peak_node == b.peak_node);
  CHECK(a.live_at_peak == b.live_at_peak);
  CHECK(a.weights_and_inputs_bytes == b.weights_and_inputs_bytes);
}

TEST_CASE("arena: outputs and measured peak as with the pool on the plan fixtures", "[exec][arena]") {
  for (const Fixture& f : PlanFixtures()) {
    auto path = testing::DataPath(f.file);
    if (!path) continue;
    INFO(f.file << " " << f.dims);
    Model m = testing::LoadShaped(*path);
    auto feeds = CompleteFeeds(m.graph, {}, DimBindings::Parse(f.dims).value(), 11);
    INFO(feeds.status().message());
    REQUIRE(feeds.ok());
    auto plan = PlanRunArena(m, *feeds);
    INFO(plan.status().message());
    REQUIRE(plan.ok());

    // The arena is the one the peak estimate's footprint counts.
    auto order = ResolveRunOrder(m.graph, {});
    REQUIRE(order.ok());
    const PeakEstimate estimate = EstimatePeak(m.graph, *order, {}, DimsFromFeeds(m.graph, *feeds));
    CHECK((*plan)->arena_bytes == estimate.arena_bytes);

    auto pooled = Execute(m, *feeds);
    REQUIRE(pooled.ok());
    RunOptions options;
    options.arena = *plan;
    auto first = Execute(m, *feeds, options);
    INFO(first.status().message());
    REQUIRE(first.ok());
    // A second run while the first one's outputs are held: its arena is another buffer.
    auto second = Execute(m, *feeds, options);
    REQUIRE(second.ok());
    CheckSameOutputs(pooled->outputs, first->outputs);
    CheckSameOutputs(pooled->outputs, second->outputs);
    CheckSameMemory(pooled->memory, first->memory);

    // Every output with a slot ended up in the arena: the step's memory is the arena.
    const ArenaUse& use = first->arena;
    CHECK(use.arena_bytes == (*plan)->arena_bytes);
    CHECK(use.outside == 0);
    CHECK(use.in_slot + use.views_kept + use.moved > 0);
  }
}

TEST_CASE("arena: the plan's slots and next writes", "[exec][arena]") {
  auto path = testing::DataPath("src:tests/data/plan/gpt2_tiny_2layer.onnx");
  if (!path) return;
  Model m = testing::LoadShaped(*path);
  auto order = ResolveRunOrder(m.graph, {});
  REQUIRE(order.ok());
  const DimBindings dims = DimBindings::Parse("batch=2,seq_len=16").value();
  auto plan = PlanArena(m.graph, *order, dims);
  REQUIRE(plan.ok());
  const ValueLiveRanges ranges = ComputeValueLiveRanges(m.graph, *order, dims);
  const int32_t steps = static_cast<int32_t>(order->order.size());
  std::vector<ValueId> in_arena;
  for (size_t v = 0; v < plan->offset.size(); ++v) {
    if (plan->offset[v] != ArenaPlan::kNotInArena) in_arena.push_back(static_cast<ValueId>(v));
  }
  REQUIRE(static_cast<int32_t>(in_arena.size()) == plan->values);
  auto overlap = [&](ValueId a, ValueId b) {
    return plan->offset[a] < plan->offset[b] + plan->size[b] && plan->offset[b] < plan->offset[a] + plan->size[a];
  };
  for (ValueId u : in_arena) {
    CHECK(plan->size[u] == ranges.size[u]);
    CHECK(plan->offset[u] + plan->size[u] <= plan->arena_bytes);
    int32_t next = ArenaPlan::kNoWrite;
    for (ValueId w : in_arena) {
      if (w == u || !overlap(u, w)) continue;
      // Values sharing a byte never live at the same step ...
      const int32_t u_end = std::min(ranges.release[u], steps), w_end = std::min(ranges.release[w], steps);
      CHECK((u_end < ranges.alloc[w] || w_end < ranges.alloc[u]));
      // ... and the first one after u is its next write.
      if (ranges.alloc[w] > ranges.release[u]) next = std::min(next, ranges.alloc[w]);
    }
    CHECK(plan->next_write[u] == next);
  }
}

// b is a view of a (Reshape), and a is released at that step: the Sigmoid after it may be laid out
// over a's bytes while b, a graph output, still needs them.
constexpr const char* kViewGraph = R"(
    <ir_version: 8, opset_import: ["" : 15]>
    g (float[N, 64] x) => (float[32, 32] b, float[N, 64] out) {
      shape = Constant <value = int64[2] {32, 32}> ()
      a = Relu(x)
      b = Reshape(a, shape)
      c = Sigmoid(x)
      d = Mul(c, c)
      e = Tanh(d)
      out = Add(e, x)
    })";

TEST_CASE("arena: a view outliving the value it shares is kept intact", "[exec][arena]") {
  Model m = testing::TextModel(kViewGraph, {"shape", "relu", "reshape", "sigmoid", "mul", "tanh", "add"});
  Tensor x(DataType::kFloat, {16, 64});
  for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = static_cast<float>(i % 97) * 0.25f - 12.0f;
  const std::map<std::string, Tensor> feeds = {{"x", x}};
  auto plan = PlanRunArena(m, feeds);
  INFO(plan.status().message());
  REQUIRE(plan.ok());
  const ValueId a = m.graph.FindValue("a");
  // a is released where b is made; something later is laid out over a's bytes.
  REQUIRE((*plan)->next_write[a] != ArenaPlan::kNoWrite);
  auto pooled = Execute(m, feeds);
  REQUIRE(pooled.ok());
  RunOptions options;
  options.arena = *plan;
  auto arena = Execute(m, feeds, options);
  REQUIRE(arena.ok());
  CheckSameOutputs(pooled->outputs, arena->outputs);
  CHECK(arena->arena.moved >= 1);  // b, copied into its own slot
  CHECK(arena->arena.outside == 0);
}

TEST_CASE("arena: a node's slots go to the first tensors of their size, filled as the pool fills", "[exec][arena]") {
  Model m = testing::TextModel(kViewGraph, {"shape", "relu", "reshape", "sigmoid", "mul", "tanh", "add"});
  Tensor x(DataType::kFloat, {16, 64});
  auto plan = PlanRunArena(m, {{"x", x}});
  REQUIRE(plan.ok());
  const Node& relu = m.graph.node(testing::NodeByName(m.graph, "relu"));
  BufferPool& pool = BufferPool::Global();
  const bool poison = pool.poison();
  pool.SetPoison(true);
  ArenaAllocator arena(*plan);
  const void* slot = nullptr;
  {
    ArenaAllocator::Offer offer(&arena, relu);
    Tensor in_parallel;
    ParallelFor(1, 1, [&](int64_t, int64_t) { in_parallel = Tensor::Uninitialized(DataType::kFloat, {16, 64}); });
    Tensor other_size = Tensor::Uninitialized(DataType::kFloat, {16, 63});
    Tensor first = Tensor::Uninitialized(DataType::kFloat, {16, 64});  // a's slot, poisoned
    Tensor second(DataType::kFloat, {16, 64});                          // no slot left: the pool's
    slot = first.raw();
    CHECK(in_parallel.raw() != slot);
    CHECK(other_size.raw() != slot);
    CHECK(second.raw() != slot);
    const auto* bytes = static_cast<const unsigned char*>(first.raw());
    CHECK(std::all_of(bytes, bytes + first.bytes(), [](unsigned char b) { return b == 0xFF; }));
    std::memset(first.raw(), 7, static_cast<size_t>(first.bytes()));
    offer.End();
    Tensor after(DataType::kFloat, {16, 64});
    CHECK(after.raw() != slot);
  }
  {
    ArenaAllocator::Offer offer(&arena, relu);  // the same slot again, zero-filled
    Tensor zeroed(DataType::kFloat, {16, 64});
    CHECK(zeroed.raw() == slot);
    const auto* bytes = static_cast<const unsigned char*>(zeroed.raw());
    CHECK(std::all_of(bytes, bytes + zeroed.bytes(), [](unsigned char b) { return b == 0; }));
  }
  pool.SetPoison(poison);
}

TEST_CASE("arena: unbound dims, another order, no offer: the pool", "[exec][arena]") {
  auto path = testing::DataPath("src:tests/data/plan/relu_mlp_train.onnx");
  if (!path) return;
  Model m = testing::LoadShaped(*path);
  auto order = ResolveRunOrder(m.graph, {});
  REQUIRE(order.ok());
  auto unbound = PlanArena(m.graph, *order, DimBindings());
  if (!unbound.ok()) CHECK(unbound.status().message().find("dims not bound") != std::string::npos);

  auto feeds = CompleteFeeds(m.graph, {}, DimBindings::Parse("batch=4").value(), 3);
  REQUIRE(feeds.ok());
  auto plan = PlanRunArena(m, *feeds);
  REQUIRE(plan.ok());
  auto other = std::make_shared<ArenaPlan>(**plan);
  std::reverse(other->order.begin(), other->order.end());
  RunOptions options;
  options.arena = other;
  auto run = Execute(m, *feeds, options);
  REQUIRE(run.ok());
  CHECK(run->arena.arena_bytes == 0);  // planned for another order: not used

  CHECK(ArenaAllocator::Claim(64, true) == nullptr);  // no node offers its slots here
}

}  // namespace
}  // namespace memopt
