#include "grad/tied_parameters.h"

#include <algorithm>
#include <map>
#include <set>

#include "grad/grad_context.h"

namespace memopt::grad {

namespace {

/// Inputs of parametric ops that hold parameters (weight, scale, bias).
const std::map<std::string, std::vector<int>>& ParameterSlots() {
  static const std::map<std::string, std::vector<int>> slots = {
      {"BatchNormalization", {1, 2}},
      {"Conv", {1, 2}},
      {"ConvTranspose", {1, 2}},
      {"FusedMatMul", {0, 1}},
      {"Gemm", {1, 2}},
      {"GroupNormalization", {1, 2}},
      {"InstanceNormalization", {1, 2}},
      {"LayerNormalization", {1, 2}},
      {"MatMul", {0, 1}},
      {"RMSNormalization", {1}},
      {"SimplifiedLayerNormalization", {1}},
      {"SkipLayerNormalization", {2, 3, 4}},
      {"SkipSimplifiedLayerNormalization", {2, 3}},
  };
  return slots;
}

bool IsKnownDomain(const Node& node) { return node.domain.empty() || node.domain == kMsDomain; }

/// The bias of a Linear or Conv layer that the exporter wrote as a separate Add.
bool IsBiasAdd(const Graph& graph, const Node& node, int input) {
  if (node.op_type != "Add" || !node.domain.empty() || node.inputs.size() != 2) return false;
  const ValueId other = node.inputs[1 - input];
  if (other == kNone || graph.value(other).producer == kNone) return false;
  const Node& producer = graph.node(graph.value(other).producer);
  return IsKnownDomain(producer) && (producer.op_type == "MatMul" || producer.op_type == "FusedMatMul" ||
                                     producer.op_type == "Gemm" || producer.op_type == "Conv");
}

bool IsParameterSlot(const Graph& graph, const Node& node, int input) {
  if (!IsKnownDomain(node)) return false;
  const auto& slots = ParameterSlots();
  auto it = slots.find(node.op_type);
  if (it != slots.end()) return std::find(it->second.begin(), it->second.end(), input) != it->second.end();
  return IsBiasAdd(graph, node, input);
}

std::string NodeLabel(const Node& node) {
  return node.name.empty() ? node.op_type + "#" + std::to_string(node.id) : node.name;
}

/// The node's module: from the exporter's metadata, else the path of a TorchScript-style name
/// ("/model/ln_f/LayerNormalization"), else the node itself.
std::string ModuleOf(const Node& node) {
  if (!node.module.empty()) return node.module;
  const size_t slash = node.name.rfind('/');
  if (slash == std::string::npos) return NodeLabel(node);
  return node.name.substr(0, slash);
}

}  // namespace

std::vector<TiedParameter> FindTiedParameters(const Graph& graph, const std::vector<ValueId>& candidates) {
  std::vector<TiedParameter> out;
  for (ValueId v : candidates) {
    const Value& value = graph.value(v);
    if (!value.initializer.has_value()) continue;
    std::set<NodeId> readers;
    for (const auto& [node, input] : value.consumers) {
      if (IsParameterSlot(graph, graph.node(node), input)) readers.insert(node);
    }
    std::set<std::string> modules;
    for (NodeId n : readers) modules.insert(ModuleOf(graph.node(n)));
    if (modules.size() < 2) continue;
    TiedParameter tied;
    tied.initializer = value.name;
    for (NodeId n : readers) tied.nodes.push_back(NodeLabel(graph.node(n)));
    tied.modules = static_cast<int>(modules.size());
    out.push_back(std::move(tied));
  }
  return out;
}

}  // namespace memopt::grad
