#include "grad/torch_parameters.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <map>
#include <regex>
#include <set>

#include "exec/initializer_reader.h"
#include "exec/tensor_io.h"
#include "grad/owned_initializer.h"
#include "grad/torch_recurrent_weights.h"
#include "io/newer_proto_fields.h"
#include "io/torch_module_names.h"

namespace memopt::grad {

namespace {

constexpr const char* kSignatureKey = "pkg.torch.export.ExportedProgram.graph_signature";
constexpr const char* kFxNodeKey = "pkg.torch.onnx.fx_node";

using io::Trim;

/// "weight" of "model.fc.weight".
std::string LastComponent(const std::string& name) {
  const auto dot = name.rfind('.');
  return dot == std::string::npos ? name : name.substr(dot + 1);
}

std::string FxText(const Node& node) {
  for (const auto& [key, value] : io::NodeMetadata(node.proto)) {
    if (key == kFxNodeKey) return value;
  }
  return "";
}

/// `aten.index.Tensor(x, [i, j, None, ...])` whose index tensors come first: its ONNX lowering
/// gathers from x in x's own layout.
bool IndexesLeadingDims(const FxCall& call) {
  if (call.target.rfind("aten.index.Tensor", 0) != 0 || call.args.size() < 2) return false;
  std::string list = Trim(call.args[1]);
  if (list.size() < 2 || list.front() != '[' || list.back() != ']') return false;
  list = list.substr(1, list.size() - 2);
  bool seen_none = false, first = true;
  for (size_t begin = 0; begin <= list.size();) {
    size_t end = list.find(',', begin);
    if (end == std::string::npos) end = list.size();
    const bool none = Trim(list.substr(begin, end - begin)) == "None";
    if ((first && none) || (seen_none && !none)) return false;
    seen_none = seen_none || none;
    first = false;
    begin = end + 1;
  }
  return true;
}

/// The batch-norm calls of torch.export and whether this one ran in training mode.
bool IsTrainingBatchNorm(const FxCall& call) {
  const std::string& t = call.target;
  auto starts = [&](const char* p) { return t.rfind(p, 0) == 0; };
  if (starts("aten._native_batch_norm_legit_functional") || starts("aten._native_batch_norm_legit.") ||
      starts("aten.native_batch_norm") || starts("aten._batch_norm_with_update")) {
    if (starts("aten._batch_norm_with_update")) return true;
    return call.args.size() > 5 && call.args[5] == "True";
  }
  if (starts("aten.batch_norm")) return call.args.size() > 5 && call.args[5] == "True";
  return false;
}

class Restorer {
 public:
  explicit Restorer(Model& model) : model_(model), g_(model.graph), reader_(model) {}

  Expected<TorchParameterStats> Run() {
    std::string signature;
    for (const auto& [key, value] : model_.graph_metadata) {
      if (key == kSignatureKey) signature = value;
    }
    if (signature.empty()) return stats_;
    stats_.has_signature = true;
    for (const auto& [placeholder, kind_target] : ParseGraphSignature(signature)) {
      by_placeholder_[placeholder] = kind_target;
      if (!kind_target.second.empty()) target_set_.insert(kind_target.second);
      if (kind_target.first == "PARAMETER") parameter_set_.insert(kind_target.second);
      if (kind_target.first == "BUFFER") stats_.buffers.push_back(kind_target.second);
      if (kind_target.first == "PARAMETER") order_.push_back(kind_target.second);
    }
    const size_t node_count = g_.nodes.size();
    for (size_t n = 0; n < node_count; ++n) MEMOPT_RETURN_IF_ERROR(VisitNode(static_cast<NodeId>(n)));
    if (!new_nodes_.empty()) {
      std::vector<Node> nodes = std::move(new_nodes_);
      for (Node& node : g_.nodes) nodes.push_back(std::move(node));
      g_.nodes = std::move(nodes);
      for (size_t i = 0; i < g_.nodes.size(); ++i) g_.nodes[i].id = static_cast<NodeId>(i);
    }
    g_.RebuildLinks();
    for (const std::string& p : order_) {
      const ValueId v = g_.FindValue(p);
      if (v != kNone && g_.value(v).initializer) {
        stats_.parameters.push_back(p);
      } else {
        stats_.unrecoverable.push_back(p);
      }
    }
    return stats_;
  }

 private:
  /// The PARAMETER / BUFFER targets a call reads, in argument order.
  std::vector<std::string> TargetsRead(const FxCall& call) const {
    std::vector<std::string> out;
    for (const std::string& arg : call.args) {
      // Arguments may be lists of values: "[%p_a, %p_b]".
      for (size_t at = arg.find('%'); at != std::string::npos; at = arg.find('%', at + 1)) {
        size_t end = at + 1;
        while (end < arg.size() && (std::isalnum(static_cast<unsigned char>(arg[end])) || arg[end] == '_')) ++end;
        auto it = by_placeholder_.find(arg.substr(at + 1, end - at - 1));
        if (it == by_placeholder_.end()) continue;
        const auto& [kind, target] = it->second;
        if ((kind == "PARAMETER" || kind == "BUFFER") &&
            std::find(out.begin(), out.end(), target) == out.end()) {
          out.push_back(target);
        }
      }
    }
    return out;
  }

  bool IsSignatureTarget(const std::string& name) const { return target_set_.count(name) != 0; }

  Status VisitNode(NodeId n) {
    const std::string text = FxText(g_.nodes[n]);
    if (text.empty()) return Status::Ok();
    MEMOPT_RETURN_IF_ERROR(RestoreHandWrittenTranspose(n));
    const FxCall call = ParseFxNode(text);
    const std::vector<std::string> targets = TargetsRead(call);
    if (IsTrainingBatchNorm(call)) MEMOPT_RETURN_IF_ERROR(TrainingBatchNorm(n, targets));
    if (IsRecurrentCall(call)) return RecurrentLayer(n, text, call);
    // The node's initializer inputs that are not what its call reads: merged or folded copies.
    std::vector<std::string> missing;
    for (const std::string& t : targets) {
      bool direct = false;
      for (ValueId in : g_.nodes[n].inputs) direct = direct || (in != kNone && g_.value(in).name == t);
      if (!direct) missing.push_back(t);
    }
    if (missing.empty()) return Status::Ok();
    for (size_t slot = 0; slot < g_.nodes[n].inputs.size() && !missing.empty(); ++slot) {
      const ValueId in = g_.nodes[n].inputs[slot];
      if (in == kNone || !g_.value(in).initializer || g_.value(in).initializer->is_sparse) continue;
      const std::string name = g_.value(in).name;
      if (std::find(targets.begin(), targets.end(), name) != targets.end()) continue;
      if (IsSignatureTarget(name)) {
        // Merged by value: the parameter with the same role ("weight", "bias") gets a copy.
        auto it = std::find_if(missing.begin(), missing.end(),
                                [&](const std::string& p) { return LastComponent(p) == LastComponent(name); });
        if (it == missing.end()) continue;
        MEMOPT_ASSIGN_OR_RETURN(ValueId copy, CopyOf(in, *it, /*transpose=*/false));
        g_.nodes[n].inputs[slot] = copy;
        missing.erase(it);
        continue;
      }
      // A generated constant: the parameter itself, renamed by an identity transpose
      // (aten.index on leading dims: torch_lib moves the indexed dims first).
      if (slot == 0 && IndexesLeadingDims(call)) {
        const std::vector<std::string> data = TargetsRead(FxCall{"", {call.args[0]}});
        auto it = data.size() == 1 ? std::find(missing.begin(), missing.end(), data[0]) : missing.end();
        if (it == missing.end()) continue;
        MEMOPT_ASSIGN_OR_RETURN(ValueId copy, CopyOf(in, *it, /*transpose=*/false));
        g_.nodes[n].inputs[slot] = copy;
        missing.erase(it);
        continue;
      }
      // A generated constant: a Linear weight folded into its transpose.
      const bool linear = call.target.rfind("aten.linear", 0) == 0 && call.args.size() > 1;
      if (!linear || g_.value(in).initializer->dims.size() != 2) continue;
      const std::vector<std::string> weight = TargetsRead(FxCall{"", {call.args[1]}});
      if (weight.size() != 1) continue;
      auto it = std::find(missing.begin(), missing.end(), weight[0]);
      if (it == missing.end()) continue;
      MEMOPT_RETURN_IF_ERROR(RestoreTranspose(in, *it));
      missing.erase(it);
    }
    return Status::Ok();
  }

  /// aten.lstm/gru/rnn_*(input, hx, params, has_biases, num_layers, dropout, train,
  /// bidirectional, batch_first): one ONNX node per layer, in order.
  static bool IsRecurrentCall(const FxCall& call) {
    for (const char* op : {"aten.lstm.input", "aten.gru.input", "aten.rnn_tanh.input", "aten.rnn_relu.input"}) {
      if (call.target.rfind(op, 0) == 0) return call.args.size() >= 8;
    }
    return false;
  }

  Status RecurrentLayer(NodeId n, const std::string& text, const FxCall& call) {
    const Node& node = g_.nodes[n];
    if (node.op_type != "LSTM" && node.op_type != "GRU" && node.op_type != "RNN") return Status::Ok();
    const int layer = recurrent_layers_seen_[text]++;
    RecurrentLayerParameters params;
    params.has_biases = Trim(call.args[3]) == "True";
    const int64_t dirs = Trim(call.args[7]) == "True" ? 2 : 1;
    const std::vector<std::string> all = TargetsRead(FxCall{"", {call.args[2]}});
    const size_t per_layer = static_cast<size_t>(dirs * (params.has_biases ? 4 : 2));
    if (all.size() < (layer + 1) * per_layer) return Status::Ok();
    params.names.assign(all.begin() + layer * per_layer, all.begin() + (layer + 1) * per_layer);
    MEMOPT_ASSIGN_OR_RETURN(int restored, RestoreRecurrentWeights(g_, reader_, n, params, new_nodes_));
    stats_.recurrent_parameters += restored;
    return Status::Ok();
  }

  /// `x @ self.weight.T` written by hand (Falcon's Linear): the call reads a value the optimizer
  /// folded (`%permute_2`), which keeps the fx name of the transpose that made it. When the
  /// node's module has a `weight` parameter that is nowhere in the graph, that is the one.
  Status RestoreHandWrittenTranspose(NodeId n) {
    const Node& node = g_.nodes[n];
    if (node.op_type != "MatMul" || node.inputs.size() != 2 || node.inputs[1] == kNone) return Status::Ok();
    const ValueId in = node.inputs[1];
    const Value& value = g_.value(in);
    if (!value.initializer || value.initializer->dims.size() != 2 || IsSignatureTarget(value.name)) {
      return Status::Ok();
    }
    static const std::regex kTransposeName("^(permute|t|transpose|numpy_T)(_[0-9]+)?$");
    if (!std::regex_match(value.name, kTransposeName)) return Status::Ok();
    const std::string module = io::ModuleFromMetadata(io::NodeMetadata(node.proto));
    const std::string weight = module + ".weight";
    if (module.empty() || parameter_set_.count(weight) == 0 || g_.FindValue(weight) != kNone) return Status::Ok();
    return RestoreTranspose(in, weight);
  }

  /// Inference-mode BatchNormalization of a training-mode call: back to training mode. Any other
  /// op with such a call is a batch norm the optimizer folded away.
  Status TrainingBatchNorm(NodeId n, const std::vector<std::string>& targets) {
    Node& node = g_.nodes[n];
    if (node.op_type != "BatchNormalization" || !node.domain.empty()) {
      std::string module = targets.empty() ? std::string("a BatchNorm") : "'" + targets[0] + "'";
      const auto dot = module.rfind('.');
      if (!targets.empty() && dot != std::string::npos) module = module.substr(0, dot) + "'";
      return Unsupported("node " + node.Describe() + ": the exporter's optimizer folded the training-mode batch norm " +
                         module + " into this " + node.op_type +
                         " (its weights were rescaled by the running statistics), so no gradient of this export is "
                         "PyTorch's; export with torch.onnx.export(..., optimize=False)");
    }
    if (node.GetInt("training_mode", 0) != 0 || node.since_version < 14) return Status::Ok();
    auto* attr = node.proto.add_attribute();
    attr->set_name("training_mode");
    attr->set_type(onnx::AttributeProto::INT);
    attr->set_i(1);
    while (node.outputs.size() < 3) {
      const ValueId stat = node.inputs.size() > node.outputs.size() + 2 ? node.inputs[node.outputs.size() + 2] : kNone;
      std::string base = (stat != kNone ? g_.value(stat).name : node.name) + "_updated";
      std::string name = base;
      for (int k = 1; g_.FindValue(name) != kNone; ++k) name = base + "_" + std::to_string(k);
      node.outputs.push_back(g_.GetOrAddValue(name));
    }
    ++stats_.training_batch_norms;
    return Status::Ok();
  }

  /// A new initializer `name` holding `from`'s values (transposed when asked), or the existing one.
  Expected<ValueId> CopyOf(ValueId from, const std::string& name, bool transpose) {
    const ValueId existing = g_.FindValue(name);
    if (existing != kNone) {
      if (!g_.value(existing).initializer) {
        return InvalidInput("tensor '" + name + "' names a parameter in the graph signature but is not an initializer");
      }
      return existing;
    }
    MEMOPT_ASSIGN_OR_RETURN(Tensor t, reader_.Read(from));
    if (transpose) {
      const int64_t rows = t.shape()[0], cols = t.shape()[1], elem = ElemByteSize(t.dtype());
      MEMOPT_ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(t.dtype(), {cols, rows}, "parameter '" + name + "'"));
      const auto* src = static_cast<const char*>(t.raw());
      auto* dst = static_cast<char*>(out.raw());
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t c = 0; c < cols; ++c) std::memcpy(dst + (c * rows + r) * elem, src + (r * cols + c) * elem, elem);
      }
      t = std::move(out);
    }
    const ValueId v = AddOwnedInitializer(g_, name, t, g_.value(from).initializer->file_offset);
    if (transpose) ++stats_.restored_transposes;
    else ++stats_.split_merged;
    return v;
  }

  /// `folded` (an initializer holding parameter^T) becomes Transpose(parameter).
  Status RestoreTranspose(ValueId folded, const std::string& parameter) {
    if (g_.FindValue(parameter) != kNone) return Status::Ok();  // read directly elsewhere: leave the copy
    MEMOPT_ASSIGN_OR_RETURN(ValueId p, CopyOf(folded, parameter, /*transpose=*/true));
    Node node = MakeOnnxNode(g_, parameter + "/Transpose", "Transpose", {p}, {folded});
    auto* perm = node.proto.add_attribute();
    perm->set_name("perm");
    perm->set_type(onnx::AttributeProto::INTS);
    perm->add_ints(1);
    perm->add_ints(0);
    Value& f = g_.value(folded);
    f.initializer.reset();  // now computed (the writer drops the file's copy)
    new_nodes_.push_back(std::move(node));
    return Status::Ok();
  }

  Model& model_;
  Graph& g_;
  InitializerReader reader_;
  TorchParameterStats stats_;
  std::map<std::string, std::pair<std::string, std::string>> by_placeholder_;
  std::set<std::string> parameter_set_, target_set_;
  std::vector<std::string> order_;
  std::vector<Node> new_nodes_;
  std::map<std::string, int> recurrent_layers_seen_;  ///< fx call -> its ONNX nodes seen so far
};

}  // namespace

std::vector<std::pair<std::string, std::pair<std::string, std::string>>> ParseGraphSignature(const std::string& text) {
  std::vector<std::pair<std::string, std::pair<std::string, std::string>>> out;
  bool inputs = false;
  size_t begin = 0;
  while (begin <= text.size()) {
    size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    const std::string line = Trim(text.substr(begin, end - begin));
    begin = end + 1;
    if (line.rfind('#', 0) == 0) {
      inputs = line.find("inputs") != std::string::npos;
      continue;
    }
    if (!inputs || line.empty()) continue;
    const auto colon = line.find(": ");
    if (colon == std::string::npos) continue;
    const std::string placeholder = line.substr(0, colon);
    std::string rest = line.substr(colon + 2);
    const std::string kind = rest.substr(0, rest.find(' '));
    std::string target;
    const auto t = rest.find("target='");
    if (t != std::string::npos) {
      const auto close = rest.find('\'', t + 8);
      if (close != std::string::npos) target = rest.substr(t + 8, close - t - 8);
    }
    out.push_back({placeholder, {kind, target}});
  }
  return out;
}

FxCall ParseFxNode(const std::string& text) {
  FxCall call;
  const auto t = text.find("[target=");
  if (t == std::string::npos) return call;
  const auto close = text.find("](", t);
  if (close == std::string::npos) return call;
  call.target = text.substr(t + 8, close - t - 8);
  if (call.target.rfind("torch.ops.", 0) == 0) call.target = call.target.substr(10);
  const auto a = text.find("args = (", close);
  if (a == std::string::npos) return call;
  int depth = 0;
  std::string current;
  for (size_t i = a + 8; i < text.size(); ++i) {
    const char c = text[i];
    if (depth == 0 && (c == ')' || c == ',')) {
      if (!Trim(current).empty()) call.args.push_back(Trim(current));
      current.clear();
      if (c == ')') break;
      continue;
    }
    if (c == '(' || c == '[' || c == '{') ++depth;
    if (c == ')' || c == ']' || c == '}') --depth;
    current += c;
  }
  return call;
}

Expected<TorchParameterStats> RestoreTorchParameters(Model& model) { return Restorer(model).Run(); }

}  // namespace memopt::grad
