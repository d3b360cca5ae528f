// The executor's measured peak equals scan's static estimate (same rules, same dims) on the real
// graphs in ../shared/data, run with seeded random inputs through the built-in CPU kernels.
#include <catch2/catch.hpp>

#include "helpers/analysis_test_util.h"
#include "analysis/scan.h"
#include "exec/executor.h"
#include "exec/input_binding.h"
#include "exec/random_inputs.h"
#include "test_data.h"

namespace memopt {
namespace {

void CheckMeasuredPeakEqualsEstimate(const std::string& relative, const std::string& dims_text) {
  auto path = testing::SharedData(relative);
  if (!path) return;
  INFO(relative);
  Model m = testing::LoadShaped(*path);
  Status supported = CheckSupported(m.graph, KernelRegistry::Cpu());
  INFO(supported.message());
  REQUIRE(supported.ok());

  DimBindings dims = DimBindings::Parse(dims_text).value();
  auto feeds = CompleteFeeds(m.graph, {}, dims, 7);
  INFO(feeds.status().message());
  REQUIRE(feeds.ok());
  auto run = Execute(m, *feeds);
  INFO(run.status().message());
  REQUIRE(run.ok());

  ScanOptions options;
  options.dims = DimsFromFeeds(m.graph, *feeds);
  for (const auto& [name, value] : dims.values()) options.dims.Set(name, value);
  auto scan = Scan(m.graph, options);
  INFO(scan.status().message());
  REQUIRE(scan.ok());
  CHECK(scan->peak.sized);
  CHECK(scan->peak.unsized_values == 0);
  CHECK(run->memory.weights_and_inputs_bytes == scan->peak.weights_and_inputs_bytes);
  CHECK(run->memory.peak_bytes == scan->peak.peak_bytes);
  CHECK(run->memory.peak_position == scan->peak.peak_position);
  CHECK(run->memory.peak_node == scan->peak.peak_node);
  CHECK(run->outputs.size() == m.graph.outputs.size());
}

TEST_CASE("executor on real graphs: recompute_gelu", "[exec][executor][data]") {
  CheckMeasuredPeakEqualsEstimate("ort_recompute/recompute_gelu.onnx", "input1_dim0=4,input1_dim1=784");
}

TEST_CASE("executor on real graphs: recompute_tile", "[exec][executor][data]") {
  CheckMeasuredPeakEqualsEstimate("ort_recompute/recompute_tile.onnx",
                                  "input1_dim0=24,input1_dim1=8,query_layer_dim0=48,query_layer_dim1=8,"
                                  "query_layer_dim2=16");
}

TEST_CASE("executor on real graphs: 3-layer BLOOM (ATen embedding, float16)", "[exec][executor][data]") {
  CheckMeasuredPeakEqualsEstimate("ort_recompute/3layer_bloom_optimized_training.onnx",
                                  "inputs_input_ids_dim0=2,inputs_attention_mask_dim1=8,inputs_attention_mask_dim0=2,"
                                  "inputs_labels_dim0=2,inputs_labels_dim1=8");
}

TEST_CASE("executor on real graphs: MNIST training model", "[exec][executor][data]") {
  CheckMeasuredPeakEqualsEstimate("ort_training_api/training_model.onnx", "input-0_dim0=8,input-0_dim1=784,"
                                                                          "output-0_dim0=8");
  CheckMeasuredPeakEqualsEstimate("ort_training_api/eval_model.onnx", "input-0_dim0=8,input-0_dim1=784,"
                                                                      "output-0_dim0=8");
}

TEST_CASE("executor on real graphs: forward transformers", "[exec][executor][data]") {
  CheckMeasuredPeakEqualsEstimate("forward/bert_toy_optimized.onnx", "batch=2,max_seq_len_in_batch=16");
  CheckMeasuredPeakEqualsEstimate("forward/gpt2_megatron.onnx", "batch_size=2,seq_len=64,past_seq_len=0");
  CheckMeasuredPeakEqualsEstimate("forward/TFBertForQuestionAnswering.onnx", "batch_size=2");
}

}  // namespace
}  // namespace memopt
