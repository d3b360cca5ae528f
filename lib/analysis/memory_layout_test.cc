#include "analysis/memory_layout.h"

#include <catch2/catch.hpp>

#include "helpers/plan_test_util.h"
#include "test_data.h"

namespace memopt {
namespace {

/// Live ranges by hand: (alloc, release, bytes) per value.
ValueLiveRanges Ranges(const std::vector<std::tuple<int32_t, int32_t, int64_t>>& values) {
  ValueLiveRanges r;
  for (const auto& [alloc, release, bytes] : values) {
    r.alloc.push_back(alloc);
    r.release.push_back(release);
    r.size.push_back(bytes);
    r.bytes.emplace_back();
  }
  return r;
}

/// No alignment: arena sizes by hand in bytes.
MemoryLayoutOptions Unaligned() {
  MemoryLayoutOptions options;
  options.alignment = 1;
  options.small_alignment = 1;
  return options;
}

TEST_CASE("memory layout: values whose lifetimes do not overlap share bytes (by hand)", "[analysis][memory_layout]") {
  // a [0, 1] 100 B, b [1, 2] 200 B, c [2, 3] 100 B, a weight (always live) and a 0-byte value:
  // at most 300 B live (steps 1 and 2); a and c can share the same 100 B beside b.
  const ValueLiveRanges r = Ranges({{0, 1, 100}, {1, 2, 200}, {2, 3, 100}, {ValueLiveRanges::kAlways, 4, 5000}, {3, 3, 0}});
  MemoryLayoutOptions options = Unaligned();
  const MemoryLayout layout = PlanMemoryLayout(r, 4, options);
  CHECK(layout.values == 3);
  CHECK(layout.live_peak_bytes == 300);
  CHECK(layout.arena_bytes == 300);
  CHECK(layout.offset[0] == layout.offset[2]);
  CHECK(layout.offset[3] == MemoryLayout::kNotInArena);
  CHECK(layout.offset[4] == MemoryLayout::kNotInArena);
  CHECK(LayoutIsValid(r, layout, options));
  // With 64-byte alignment every size rounds up: 128 + 256 = 384 B.
  const MemoryLayout aligned = PlanMemoryLayout(r, 4);
  CHECK(aligned.arena_bytes == 384);
  CHECK(aligned.live_peak_bytes == 300);
  CHECK(LayoutIsValid(r, aligned));
}

TEST_CASE("memory layout: greedy by size avoids the hole best fit in order leaves (by hand)", "[analysis][memory_layout]") {
  // a [0, 1] 100 B and b [0, 3] 100 B from step 0, c [2, 3] 150 B from step 2. In order: a at 0,
  // b at 100; a dies and leaves a 100 B hole c does not fit, so c goes on top: 350 B. Greedy by
  // size: c at 0, a at 0 too (they never live together), b at 150: 250 B, the live peak.
  const ValueLiveRanges r = Ranges({{0, 1, 100}, {0, 3, 100}, {2, 3, 150}});
  MemoryLayoutOptions options = Unaligned();
  const MemoryLayout layout = PlanMemoryLayout(r, 4, options);
  CHECK(layout.live_peak_bytes == 250);
  CHECK(layout.arena_bytes == 250);
  CHECK(layout.method == "greedy by size, best fit");
  CHECK(LayoutIsValid(r, layout, options));
  options.max_offline_work = 0;  // best fit in order only
  const MemoryLayout online = PlanMemoryLayout(r, 4, options);
  CHECK(online.method == "best fit in order");
  CHECK(online.arena_bytes == 350);
  CHECK(LayoutIsValid(r, online, options));
}

TEST_CASE("memory layout: small values are 16-byte aligned, others 64 (by hand)", "[analysis][memory_layout]") {
  // s [0, 2] 8 B (16 B, 16-aligned), big [1, 2] 100 B (128 B, 64-aligned). In order: s at 0, big at
  // 64 (48 B of padding, left free): 192 B. Greedy by size: big at 0, s at 128: 144 B.
  const ValueLiveRanges r = Ranges({{0, 2, 8}, {1, 2, 100}});
  const MemoryLayout layout = PlanMemoryLayout(r, 3);
  CHECK(layout.arena_bytes == 144);
  CHECK(layout.offset[1] == 0);
  CHECK(layout.offset[0] == 128);
  CHECK(LayoutIsValid(r, layout));
  MemoryLayoutOptions online_only;
  online_only.max_offline_work = 0;
  const MemoryLayout online = PlanMemoryLayout(r, 3, online_only);
  CHECK(online.arena_bytes == 192);
  CHECK(online.offset[0] == 0);
  CHECK(online.offset[1] == 64);
  CHECK(LayoutIsValid(r, online));
}

TEST_CASE("memory layout: a layout that overlaps two live values is invalid", "[analysis][memory_layout]") {
  const ValueLiveRanges r = Ranges({{0, 2, 128}, {1, 3, 128}});
  MemoryLayout layout = PlanMemoryLayout(r, 4);
  REQUIRE(LayoutIsValid(r, layout));
  layout.offset[1] = layout.offset[0];
  CHECK_FALSE(LayoutIsValid(r, layout));
}

/// The layout of one order: valid, its live peak the estimate's less weights and inputs, and a
/// footprint within 5% of the live-bytes peak.
void CheckLayout(const Graph& graph, const ExecutionOrder& order, const PeakEstimate& peak, const DimBindings& dims) {
  REQUIRE(peak.sized);
  const ValueLiveRanges ranges = ComputeValueLiveRanges(graph, order, dims);
  const MemoryLayout layout = PlanMemoryLayout(ranges, static_cast<int32_t>(order.order.size()));
  CHECK(LayoutIsValid(ranges, layout));
  CHECK(layout.live_peak_bytes == peak.peak_bytes - peak.weights_and_inputs_bytes);
  CHECK(layout.arena_bytes == peak.arena_bytes);
  CHECK(peak.footprint_bytes == peak.arena_bytes + peak.weights_and_inputs_bytes);
  CHECK(peak.footprint_bytes >= peak.peak_bytes);
  const MemoryLayout unaligned = PlanMemoryLayout(ranges, static_cast<int32_t>(order.order.size()), Unaligned());
  INFO("unaligned arena " << unaligned.arena_bytes << ", live " << unaligned.live_peak_bytes << ", values " << layout.values);
  INFO("footprint " << peak.footprint_bytes << ", peak " << peak.peak_bytes << " (" << layout.method << ")");
  CHECK(static_cast<double>(peak.footprint_bytes) <= 1.05 * static_cast<double>(peak.peak_bytes));
}

TEST_CASE("memory layout: every fixture and its level plans fit within 5% of the live peak", "[analysis][memory_layout]") {
  const std::vector<testing::GraphCase> cases = {
      {"src:tests/data/plan/gpt2_tiny_2layer.onnx", "batch=4,seq_len=64"},
      {"src:tests/data/plan/gpt_synth_1layer.onnx", "batch=8,seq_len=1024"},
      {"src:tests/data/plan/convnet_bn_train.onnx", "batch=4"},
      {"src:tests/data/plan/convnet_residual_train.onnx", ""},
      {"src:tests/data/plan/relu_mlp_train.onnx", "batch=4"},
      {"src:tests/data/plan/tanh_mlp_train.onnx", ""},
      {"src:tests/data/plan/peak_raising_level1.onnx", ""},
      {"ort_recompute/recompute_gelu.onnx", "input1_dim0=16,input1_dim1=784"},
      {"ort_recompute/recompute_tile.onnx",
       "input1_dim0=8,input1_dim1=128,query_layer_dim0=8,query_layer_dim1=128,query_layer_dim2=64"},
      {"ort_recompute/3layer_bloom_optimized_training.onnx",
       "inputs_input_ids_dim0=4,inputs_attention_mask_dim0=4,inputs_attention_mask_dim1=128,"
       "inputs_labels_dim0=4,inputs_labels_dim1=128"},
      {"ort_training_api/training_model.onnx", "input-0_dim0=32,input-0_dim1=784,output-0_dim0=32"},
  };
  for (const testing::GraphCase& c : cases) {
    std::optional<std::string> path = testing::DataPath(c.file);
    if (!path) continue;  // marked skipped (test_data.h)
    for (const OpTable* table : {static_cast<const OpTable*>(nullptr), &OpTable::Extended()}) {
      INFO(c.file << (table != nullptr ? " --ops extended" : ""));
      testing::Scanned s = testing::ScanFile(*path, 1, c.dims, table);
      CheckLayout(s.model.graph, s.scan.order, s.scan.peak, s.dims);
      const PlanOutcome o = testing::Outcome(s, testing::LevelPlans(s));
      CheckLayout(o.rewritten.graph, o.rewritten.order, o.peak, s.dims);
    }
  }
}

}  // namespace
}  // namespace memopt
