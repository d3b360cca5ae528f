// Shape inference on the real graphs in ../shared/data (skipped when the folder is absent).
// Expected shapes come from the graphs' own value_info (written by ORT / the exporters) and from
// python onnx shape inference (onnx.shape_inference.infer_shapes(data_prop=True)), which agrees
// with memopt on all 1842 fully-known TFBertForQuestionAnswering tensors.
#include <filesystem>
#include <fstream>
#include <set>

#include "shape/dim_expr.h"
#include "helpers/shape_test_util.h"
#include "test_data.h"

namespace memopt {
namespace {

using testing::SharedData;
using testing::TypeAndShape;

struct Loaded {
  Model model;
  ShapeInferenceStats stats;
  std::vector<TensorInfo> declared;  ///< per value, before inference, with expression dims parsed
};

std::optional<Loaded> LoadAndInfer(const std::string& relative, ShapeInferenceOptions options = {}) {
  auto path = SharedData(relative);
  if (!path.has_value()) return std::nullopt;
  auto model = LoadModel(*path);
  INFO(model.status().message());
  REQUIRE(model.ok());
  std::vector<TensorInfo> declared;
  for (const Value& v : model->graph.values) {
    TensorInfo info = v.info;
    if (info.shape.has_value()) {
      for (SymExpr& d : *info.shape) d = shape::NormalizeDeclaredDim(d);
    }
    declared.push_back(std::move(info));
  }
  auto stats = InferShapes(model->graph, options);
  INFO(stats.status().message());
  REQUIRE(stats.ok());
  return Loaded{std::move(model).value(), std::move(stats).value(), std::move(declared)};
}

bool HasFreshDim(const TensorInfo& info) {
  if (!info.shape.has_value()) return false;
  for (const SymExpr& d : *info.shape) {
    for (const std::string& s : d.Symbols()) {
      if (s.rfind("unk__", 0) == 0) return true;
    }
  }
  return false;
}

/// Names of values consumed by some node whose shape is missing or has an unk__ dim.
std::vector<std::string> UnresolvedConsumedValues(const Graph& graph) {
  std::vector<std::string> out;
  for (const Value& v : graph.values) {
    if (v.consumers.empty() || !v.info.is_tensor) continue;
    if (!v.info.shape.has_value() || HasFreshDim(v.info) || v.info.dtype == DataType::kUndefined) out.push_back(v.name);
  }
  return out;
}

TEST_CASE("recompute_gelu.onnx: Gemm and Gelu outputs", "[shape]") {
  for (bool use_declared : {true, false}) {
    ShapeInferenceOptions options;
    options.use_declared_shapes = use_declared;
    auto r = LoadAndInfer("ort_recompute/recompute_gelu.onnx", options);
    if (!r.has_value()) return;
    const Graph& g = r->model.graph;
    CHECK(TypeAndShape(g, "com.microsoft::Gelu_5") == "float[input1_dim0, 500]");
    CHECK(TypeAndShape(g, "onnx::Gemm_6") == "float[input1_dim0, 500]");
    CHECK(TypeAndShape(g, "com.microsoft::Gelu_5_grad") == "float[input1_dim0, 500]");
    CHECK(TypeAndShape(g, "_original_module.fc2.bias_grad") == "float[10]");
    CHECK(r->stats.ops_without_rule.empty());
    CHECK(r->stats.diagnostics.empty());
  }
}

TEST_CASE("recompute_tile.onnx: Tile of a Div of a dim, FusedMatMul batch broadcast", "[shape]") {
  auto r = LoadAndInfer("ort_recompute/recompute_tile.onnx");
  if (!r.has_value()) return;
  const Graph& g = r->model.graph;
  // Tile repeats = [query_layer_dim0 / 24, 1, 1] (integer division of a dim: a floor atom), so the
  // inferred dim 0 is input1_dim0*floor(query_layer_dim0/24); the graph declares query_layer_dim0,
  // a plain polynomial, which the merge prefers over the floor atom (as ORT's resolution would).
  CHECK(TypeAndShape(g, "onnx::Transpose_28") == "float[query_layer_dim0, input1_dim1, query_layer_dim2]");
  ShapeInferenceOptions no_declared;
  no_declared.use_declared_shapes = false;
  auto raw = LoadAndInfer("ort_recompute/recompute_tile.onnx", no_declared);
  REQUIRE(raw.has_value());
  const SymExpr q0 = SymExpr::Symbol("query_layer_dim0");
  const SymExpr tiled = SymExpr::Symbol("input1_dim0") * SymExpr::FloorDiv(q0, SymExpr(24));
  CHECK(TypeAndShape(raw->model.graph, "onnx::Transpose_28") ==
        "float[" + tiled.ToString() + ", input1_dim1, query_layer_dim2]");
  // The FusedMatMul batch dim broadcasts that with query_layer_dim0; the declared value_info
  // resolves it to query_layer_dim0.
  CHECK(TypeAndShape(g, "data") == "float[query_layer_dim0, query_layer_dim1, input1_dim1]");
  CHECK(TypeAndShape(g, "query_layer_grad") == "float[query_layer_dim0, query_layer_dim1, query_layer_dim2]");
  CHECK(TypeAndShape(g, "input1_grad") == "float[input1_dim0, input1_dim1, query_layer_dim2]");
  CHECK(r->stats.ops_without_rule.empty());
  CHECK(UnresolvedConsumedValues(g).empty());
}

TEST_CASE("3layer_bloom_optimized_training.onnx: every consumed value is resolved", "[shape]") {
  // No value in this graph is truly data-dependent: the only dynamic-length tensors are the
  // BroadcastGradientArgs outputs, and their lengths follow from the symbolic input shapes (all
  // differing dims there are literal 1s), so even without the declared value_info nothing is
  // left as unk__.
  for (bool use_declared : {true, false}) {
    ShapeInferenceOptions options;
    options.use_declared_shapes = use_declared;
    auto r = LoadAndInfer("ort_recompute/3layer_bloom_optimized_training.onnx", options);
    if (!r.has_value()) return;
    const Graph& g = r->model.graph;
    INFO("use_declared_shapes = " << use_declared);
    CHECK(r->stats.nodes_visited == 500);
    CHECK(r->stats.ops_without_rule.empty());
    CHECK(r->stats.diagnostics.empty());
    CHECK(r->stats.values_without_shape == 0);
    CHECK(UnresolvedConsumedValues(g) == std::vector<std::string>{});

    // Activations: the FastGelu outputs (value_info declares the same).
    int fast_gelus = 0;
    for (const Node& node : g.nodes) {
      if (node.op_type != "FastGelu") continue;
      ++fast_gelus;
      CHECK(TypeAndShape(g, g.value(node.outputs[0]).name) ==
            "float16[inputs_input_ids_dim0, inputs_attention_mask_dim1, 4096]");
    }
    CHECK(fast_gelus == 3);
    // Attention scores (the Softmax input) are [batch, 16, seq, seq]. The batch dim broadcasts
    // the attention mask's batch with input_ids' batch; the declared value_info names it
    // inputs_input_ids_dim0, without it it stays Max(...) of both.
    const std::string batch = use_declared ? std::string("inputs_input_ids_dim0")
                                           : SymExpr::Max(SymExpr::Symbol("inputs_attention_mask_dim0"),
                                                          SymExpr::Symbol("inputs_input_ids_dim0"))
                                                 .ToString();
    for (const Node& node : g.nodes) {
      if (node.op_type != "Softmax") continue;
      CHECK(TypeAndShape(g, g.value(node.inputs[0]).name) ==
            "float[" + batch + ", 16, inputs_attention_mask_dim1, inputs_attention_mask_dim1]");
    }
    // The logits after dropping the last position: Slice [:, :-1] then Reshape [-1, 1024].
    CHECK(TypeAndShape(g, "/_original_module/_original_model/lm_head/MatMul_output_0") ==
          "float16[" + (SymExpr::Symbol("inputs_input_ids_dim0") *
                        (SymExpr::Symbol("inputs_attention_mask_dim1") - SymExpr(1))).ToString() + ", 250880]");
    CHECK(TypeAndShape(g, "/_original_module/_original_model/SoftmaxCrossEntropyLossInternal_output_0") == "float16[]");
    CHECK(TypeAndShape(g, "saved_mean") == "float[inputs_input_ids_dim0, inputs_attention_mask_dim1, 1]");
    CHECK(TypeAndShape(g, "_original_module._original_model.transformer.word_embeddings.weight_grad") ==
          "float16[250880, 1024]");
  }
}

TEST_CASE("3layer_bloom_optimized_training.onnx: inferred shapes agree with the declared value_info", "[shape]") {
  ShapeInferenceOptions options;
  options.use_declared_shapes = false;
  auto r = LoadAndInfer("ort_recompute/3layer_bloom_optimized_training.onnx", options);
  if (!r.has_value()) return;
  const Graph& g = r->model.graph;
  // Where inference and the declaration legitimately differ:
  //  - the mask path derives the batch from attention_mask, the declaration from input_ids;
  //  - Or / Where / Softmax... broadcast both batches (Max) where the exporter picked input_ids;
  //  - the labels path uses inputs_labels_dim*, the declaration input_ids/attention_mask dims;
  //  - the declaration has unknown dims (unk__) that inference resolves.
  std::set<std::string> allowed_symbols = {"inputs_attention_mask_dim0", "inputs_labels_dim0", "inputs_labels_dim1"};
  int compared = 0;
  int differing = 0;
  for (size_t i = 0; i < g.values.size(); ++i) {
    const TensorInfo& dec = r->declared[i];
    const TensorInfo& inf = g.values[i].info;
    if (!dec.shape.has_value() || g.values[i].producer == kNone) continue;
    ++compared;
    CHECK(inf.dtype == dec.dtype);
    REQUIRE(inf.shape.has_value());
    if (*inf.shape == *dec.shape) continue;
    ++differing;
    bool explained = HasFreshDim(dec);
    for (const SymExpr& d : *inf.shape) {
      for (const std::string& s : d.Symbols()) explained = explained || allowed_symbols.count(s) != 0;
    }
    INFO(g.values[i].name << ": inferred " << ShapeToString(*inf.shape) << ", declared " << ShapeToString(*dec.shape));
    CHECK(explained);
  }
  CHECK(compared > 400);
  CHECK(differing < 70);
}

TEST_CASE("training_model.onnx and eval_model.onnx", "[shape]") {
  for (const char* file : {"ort_training_api/training_model.onnx", "ort_training_api/eval_model.onnx"}) {
    auto r = LoadAndInfer(file);
    if (!r.has_value()) return;
    const Graph& g = r->model.graph;
    CHECK(r->stats.ops_without_rule.empty());
    CHECK(UnresolvedConsumedValues(g).empty());
    for (ValueId o : g.outputs) CHECK(g.value(o).info.shape.has_value());
    CHECK(TypeAndShape(g, "onnx::loss::21273") == "float[]");
  }
  auto r = LoadAndInfer("ort_training_api/training_model.onnx");
  if (!r.has_value()) return;
  const Graph& g = r->model.graph;
  CHECK(TypeAndShape(g, "fc1.weight_grad.accumulation.out") == "bool[1]");
  CHECK(TypeAndShape(g, "fc1.weight_grad") == "float[500, 784]");
  CHECK(TypeAndShape(g, "fc2.bias_grad") == "float[10]");
}

TEST_CASE("forward graphs: bert_toy, gpt2_megatron, TFBertForQuestionAnswering", "[shape]") {
  for (bool use_declared : {true, false}) {
    ShapeInferenceOptions options;
    options.use_declared_shapes = use_declared;
    INFO("use_declared_shapes = " << use_declared);
    if (auto r = LoadAndInfer("forward/bert_toy_optimized.onnx", options)) {
      const Graph& g = r->model.graph;
      CHECK(r->stats.ops_without_rule.empty());
      CHECK(UnresolvedConsumedValues(g).empty());
      CHECK(TypeAndShape(g, "prediction_scores") == "float[batch, max_seq_len_in_batch, 99]");
      CHECK(TypeAndShape(g, "seq_relationship_score") == "float[batch, 2]");
    }
    if (auto r = LoadAndInfer("forward/gpt2_megatron.onnx", options)) {
      const Graph& g = r->model.graph;
      CHECK(r->stats.ops_without_rule.empty());
      CHECK(UnresolvedConsumedValues(g).empty());
      // The declared output dims are placeholders (MatMullogits_dim_0, total_seq_len); the
      // inferred ones say how they relate to the inputs.
      CHECK(TypeAndShape(g, "logits") == "float[batch_size, seq_len, 10]");
      CHECK(TypeAndShape(g, "present_0") == "float[2, batch_size, 2, " +
                                                (SymExpr::Symbol("past_seq_len") + SymExpr::Symbol("seq_len")).ToString() +
                                                ", 4]");
    }
    if (auto r = LoadAndInfer("forward/TFBertForQuestionAnswering.onnx", options)) {
      const Graph& g = r->model.graph;
      CHECK(r->stats.nodes_visited == 3836);
      CHECK(r->stats.ops_without_rule.empty());
      CHECK(r->stats.diagnostics.empty());
      CHECK(UnresolvedConsumedValues(g).empty());
      CHECK(TypeAndShape(g, "output_1") == "float[batch_size, 7]");
      CHECK(TypeAndShape(g, "output_2") == "float[batch_size, 7]");
      // Checked against python onnx shape inference.
      CHECK(TypeAndShape(g, "tf_bert_for_question_answering/bert/embeddings/LayerNorm/batchnorm/mul_1:0") ==
            "float[batch_size, 7, 8]");
      CHECK(TypeAndShape(g, "tf_bert_for_question_answering/bert/encoder/layer_._0/attention/self/Softmax:0") ==
            "float[batch_size, 2, 7, 7]");
      // onnx leaves this batch dim unknown (Slice to INT_MAX of a symbolic dim); memopt keeps it.
      CHECK(TypeAndShape(g, "attention_mask:01_cropping0") == "int32[batch_size, 1, 1, 7]");
    }
  }
}

}  // namespace
}  // namespace memopt
