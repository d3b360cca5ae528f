#include "grad/export_mismatches.h"

#include <cstring>
#include <set>

#include <fmt/format.h>

#include "exec/initializer_reader.h"
#include "io/newer_proto_fields.h"
#include "util/bytes.h"

namespace memopt::grad {

namespace {

std::string Label(const Node& node) { return node.name.empty() ? node.op_type + "#" + std::to_string(node.id) : node.name; }

std::string Quoted(const std::vector<std::string>& names, size_t max) {
  std::string out;
  for (size_t i = 0; i < names.size() && i < max; ++i) out += (i ? ", '" : "'") + names[i] + "'";
  if (names.size() > max) out += fmt::format(" and {} more", names.size() - max);
  return out;
}

/// A 2-D dense initializer's dims, or empty.
std::vector<int64_t> Dims2(const Value& v) {
  if (!v.initializer || v.initializer->is_sparse || v.initializer->dims.size() != 2) return {};
  return v.initializer->dims;
}

/// Whether `copy` [H, V] holds `table` [V, H] transposed, bit for bit; nullopt when either is
/// too large to compare or cannot be read.
std::optional<bool> IsTransposedCopy(InitializerReader& reader, const Value& table_value, ValueId table, ValueId copy) {
  if (InitializerBytes(*table_value.initializer) > kMaxComparedTiedBytes) return std::nullopt;
  auto t = reader.Read(table);
  auto c = reader.Read(copy);
  if (!t.ok() || !c.ok() || t->dtype() != c->dtype() || t->numel() != c->numel()) return std::nullopt;
  const int64_t rows = t->shape()[0], cols = t->shape()[1];
  const int64_t elem_bytes = ElemByteSize(t->dtype());
  if (elem_bytes <= 0) return std::nullopt;  // strings: not a weight
  const auto elem = static_cast<size_t>(elem_bytes);
  const auto* tb = static_cast<const unsigned char*>(t->raw());
  const auto* cb = static_cast<const unsigned char*>(c->raw());
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) {
      if (std::memcmp(tb + (i * cols + j) * elem, cb + (j * rows + i) * elem, elem) != 0) return false;
    }
  }
  return true;
}

void FindSplitTiedWeights(const Model& model, const GradSelection& s, std::vector<std::string>& out) {
  const Graph& g = model.graph;
  // Gather tables (input 0 of a Gather) among the trainable initializers.
  std::vector<ValueId> tables;
  for (ValueId v : s.trainable) {
    const Value& value = g.value(v);
    if (Dims2(value).empty()) continue;
    for (const auto& [node, input] : value.consumers) {
      if (input == 0 && g.node(node).op_type == "Gather" && g.node(node).domain.empty()) {
        tables.push_back(v);
        break;
      }
    }
  }
  if (tables.empty()) return;
  InitializerReader reader(model);
  for (ValueId v : s.trainable) {
    const Value& value = g.value(v);
    const std::vector<int64_t> dims = Dims2(value);
    if (dims.empty()) continue;
    bool matmul = false;
    for (const auto& [node, input] : value.consumers) matmul = matmul || g.node(node).op_type == "MatMul";
    if (!matmul) continue;
    for (ValueId t : tables) {
      const Value& table = g.value(t);
      const std::vector<int64_t> td = Dims2(table);
      if (t == v || td[0] != dims[1] || td[1] != dims[0] || table.initializer->dtype != value.initializer->dtype) continue;
      const std::optional<bool> copy = IsTransposedCopy(reader, table, t, v);
      const bool generated = value.name.rfind("onnx::", 0) == 0;
      if (copy == false || (!copy && !generated)) continue;
      out.push_back(fmt::format(
          "initializer '{}' [{}, {}] {} the embedding table '{}' [{}, {}] transposed, as a TorchScript export writes a "
          "tied LM head: the two get separate gradients ('{}_grad', '{}_grad'), where PyTorch trains one tensor with "
          "their sum ('{}_grad' + the transpose of '{}_grad'); sum them when you update the weights, or export the model "
          "with untied embeddings",
          value.name, dims[0], dims[1], copy ? "holds" : "has a generated name and the shape of", table.name, td[0],
          td[1], table.name, value.name, table.name, value.name));
      break;
    }
  }
}

/// What the metadata of a torch.export-based export (`pkg.torch.onnx.fx_node`) says of the aten
/// batch norm a node came from: kInference for `_native_batch_norm_legit_no_training` (an
/// eval-mode export), kTraining for a batch norm called with training=True (PyTorch 2.15 writes
/// `_native_batch_norm_legit_functional(..., True, momentum, eps)` as an inference-mode node).
enum class BatchNormOrigin { kUnknown, kInference, kTraining };

BatchNormOrigin OriginOf(const Node& node) {
  for (const auto& [key, value] : io::NodeMetadata(node.proto)) {
    if (key != "pkg.torch.onnx.fx_node" || value.find("batch_norm") == std::string::npos) continue;
    if (value.find("no_training") != std::string::npos) return BatchNormOrigin::kInference;
    if (value.find("_native_batch_norm_legit_functional") != std::string::npos ||
        value.find(", True, ") != std::string::npos) {
      return BatchNormOrigin::kTraining;
    }
  }
  return BatchNormOrigin::kUnknown;
}

void FindInferenceBatchNorms(const Model& model, const GradSelection& s, std::vector<std::string>& out) {
  const Graph& g = model.graph;
  std::vector<std::string> nodes, statistics;
  int from_training = 0;
  for (const Node& node : g.nodes) {
    if (node.op_type != "BatchNormalization" || !node.domain.empty() || !s.differentiated[node.id]) continue;
    if (node.GetInt("training_mode", 0) != 0) continue;
    const BatchNormOrigin origin = OriginOf(node);
    if (origin == BatchNormOrigin::kInference) continue;
    if (origin == BatchNormOrigin::kTraining) ++from_training;
    nodes.push_back(Label(node));
    for (size_t i = 3; i < node.inputs.size() && i < 5; ++i) {
      if (node.inputs[i] != kNone) statistics.push_back(g.value(node.inputs[i]).name);
    }
  }
  if (nodes.empty()) return;
  if (from_training > 0) {
    out.push_back(fmt::format(
        "{} BatchNormalization node(s) on the gradient path were exported from a training-mode BatchNorm (their "
        "export metadata names aten batch_norm with training=True) but run in inference mode ({}): they normalise "
        "with the running statistics given as inputs ({}) where PyTorch normalises with each batch's statistics, so "
        "the loss and the gradients differ from PyTorch's. The current dynamo exporter writes a training-mode "
        "BatchNorm2d this way; export with TorchScript (dynamo=False, training=torch.onnx.TrainingMode.TRAINING) for "
        "a training-mode graph, or train with model.eval() BatchNorm (docs/grad.md)",
        nodes.size(), Quoted(nodes, 3), Quoted(statistics, 4)));
    return;
  }
  out.push_back(fmt::format(
      "{} BatchNormalization node(s) on the gradient path run in inference mode ({}): they normalise with the "
      "running statistics given as inputs ({}), so the gradients are those of frozen statistics, not of PyTorch's "
      "training-mode BatchNorm, which normalises with each batch's statistics. If the model trains in training mode, "
      "export it in training mode (TorchScript: training=torch.onnx.TrainingMode.TRAINING; the dynamo exporter writes "
      "a training-mode BatchNorm2d in inference mode; docs/grad.md)",
      nodes.size(), Quoted(nodes, 3), Quoted(statistics, 4)));
}

}  // namespace

std::vector<std::string> FindExportMismatches(const Model& model, const GradSelection& selection) {
  std::vector<std::string> out;
  FindSplitTiedWeights(model, selection, out);
  FindInferenceBatchNorms(model, selection, out);
  return out;
}

}  // namespace memopt::grad
