#include "grad/grad_selection.h"

#include "ir/topo_order.h"

#include <algorithm>
#include <queue>
#include <regex>
#include <set>

#include "grad/grad_context.h"
#include "util/closest_match.h"

namespace memopt::grad {

bool CarriesGradient(const Graph& graph, ValueId v) {
  return v != kNone && graph.value(v).info.is_tensor && IsDifferentiableType(graph.value(v).info.dtype);
}

bool IsStopEdge(const Node& node, int i) {
  const GradRuleInfo* info = FindGradRule(node);
  if (info == nullptr) return false;
  return std::find(info->stop_inputs.begin(), info->stop_inputs.end(), i) != info->stop_inputs.end();
}

namespace {

/// Adds to `reads` the names `g` (and its own subgraphs) uses without defining them.
void CollectOuterReads(const onnx::GraphProto& g, std::set<std::string>& reads) {
  std::set<std::string> local;
  for (const auto& v : g.input()) local.insert(v.name());
  for (const auto& t : g.initializer()) local.insert(t.name());
  for (const auto& t : g.sparse_initializer()) local.insert(t.values().name());
  for (const auto& n : g.node()) local.insert(n.output().begin(), n.output().end());
  std::set<std::string> inner;
  for (const auto& n : g.node()) {
    for (const auto& name : n.input()) {
      if (!name.empty()) inner.insert(name);
    }
    for (const auto& a : n.attribute()) {
      if (a.has_g()) CollectOuterReads(a.g(), inner);
      for (const auto& sub : a.graphs()) CollectOuterReads(sub, inner);
    }
  }
  for (const auto& g_out : g.output()) inner.insert(g_out.name());
  for (const auto& name : inner) {
    if (!local.count(name)) reads.insert(name);
  }
}

/// The element type the subgraphs of `node` declare for its output `k` (If: the branches; Loop:
/// the body's outputs after its condition; Scan: the body's); kUndefined when none does.
DataType SubgraphOutputType(const Node& node, int32_t k) {
  const int offset = node.op_type == "Loop" ? 1 : 0;
  for (const auto& a : node.proto.attribute()) {
    if (!a.has_g() || k < 0 || k + offset >= a.g().output_size()) continue;
    const onnx::TypeProto& type = a.g().output(k + offset).type();
    if (type.has_tensor_type() && IsKnownDataType(type.tensor_type().elem_type())) {
      return static_cast<DataType>(type.tensor_type().elem_type());
    }
  }
  return DataType::kUndefined;
}

/// CarriesGradient, or a value whose element type nothing established: a sequence, optional or map
/// (SplitToSequence, SequenceAt, Optional, ...), the output of an op without a shape rule, an
/// If / Loop / Scan output left untyped (unless its subgraphs declare a non-float type). Such a
/// value on a path from a trainable tensor to the loss puts its producer and consumers on the
/// gradient path, where a missing gradient rule is an error naming the op: only values known to be
/// integer, boolean or string end a gradient path.
bool MayCarryGradient(const Graph& graph, ValueId v) {
  if (CarriesGradient(graph, v)) return true;
  if (v == kNone) return false;
  const Value& value = graph.value(v);
  if (value.info.is_tensor && value.info.dtype != DataType::kUndefined) return false;  // int, bool, string
  if (value.info.is_tensor && value.producer != kNone) {
    const DataType declared = SubgraphOutputType(graph.node(value.producer), value.producer_output);
    if (declared != DataType::kUndefined) return IsDifferentiableType(declared);
  }
  return true;
}

}  // namespace

std::vector<ValueId> SubgraphOuterInputs(const Graph& graph, const Node& node) {
  std::set<std::string> reads;
  for (const auto& a : node.proto.attribute()) {
    if (a.has_g()) CollectOuterReads(a.g(), reads);
    for (const auto& sub : a.graphs()) CollectOuterReads(sub, reads);
  }
  std::vector<ValueId> out;
  for (const auto& name : reads) {
    const ValueId v = graph.FindValue(name);
    if (v != kNone) out.push_back(v);
  }
  return out;
}

namespace {

bool IsScalar(const TensorInfo& info) {
  if (!info.shape) return false;
  auto n = NumElements(*info.shape).AsInt();
  return n && *n == 1;
}

Expected<std::optional<std::regex>> Compile(const std::string& pattern, const char* flag) {
  if (pattern.empty()) return std::optional<std::regex>();
  try {
    return std::optional<std::regex>(std::regex(pattern, std::regex::ECMAScript));
  } catch (const std::regex_error& e) {
    return UsageError(std::string(flag) + " '" + pattern + "' is not a valid regular expression: " + e.what());
  }
}

Status SelectOutputs(const Graph& graph, const GradOptions& options, GradSelection& s) {
  s.yield_inputs = graph.outputs;
  std::vector<std::string> names;
  for (ValueId v : graph.outputs) names.push_back(graph.value(v).name);
  if (!options.loss.empty()) {
    auto it = std::find(names.begin(), names.end(), options.loss);
    if (it == names.end()) {
      std::string list;
      for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
      std::string message = "--loss '" + options.loss + "' is not a graph output (outputs: " + list + ")";
      const std::string close = ClosestMatch(options.loss, names);
      if (!close.empty()) message += "; did you mean '" + close + "'?";
      return UsageError(message);
    }
    const int index = static_cast<int>(it - names.begin());
    if (!CarriesGradient(graph, graph.outputs[index])) {
      return InvalidInput("--loss '" + options.loss + "' has element type " +
                          DataTypeName(graph.value(graph.outputs[index]).info.dtype) + "; the loss must be a float tensor");
    }
    s.loss = options.loss;
    s.seeded = {index};
    return Status::Ok();
  }
  std::vector<int> scalars;
  for (size_t i = 0; i < graph.outputs.size(); ++i) {
    const ValueId v = graph.outputs[i];
    if (CarriesGradient(graph, v) && IsScalar(graph.value(v).info)) scalars.push_back(static_cast<int>(i));
  }
  if (scalars.size() > 1) {
    std::string list;
    for (int i : scalars) list += (list.empty() ? "'" : ", '") + names[i] + "'";
    return UsageError("the model has several scalar float outputs (" + list + "); choose the loss with --loss");
  }
  if (scalars.size() == 1) {
    s.loss = names[scalars[0]];
    s.seeded = scalars;
    return Status::Ok();
  }
  std::set<ValueId> seen;
  for (size_t i = 0; i < graph.outputs.size(); ++i) {
    const ValueId v = graph.outputs[i];
    if (CarriesGradient(graph, v) && seen.insert(v).second) s.seeded.push_back(static_cast<int>(i));
  }
  return Status::Ok();
}

Status SelectTrainable(const Graph& graph, const GradOptions& options, const std::vector<std::string>* parameters,
                       GradSelection& s) {
  std::set<std::string> parameter_set;
  if (parameters != nullptr) parameter_set.insert(parameters->begin(), parameters->end());
  MEMOPT_ASSIGN_OR_RETURN(auto trainable, Compile(options.trainable, "--trainable"));
  MEMOPT_ASSIGN_OR_RETURN(auto frozen, Compile(options.frozen, "--frozen"));
  auto wanted = [&](const std::string& name, bool by_default) {
    if (frozen && std::regex_search(name, *frozen)) return false;
    if (trainable) return std::regex_search(name, *trainable);
    return by_default;
  };
  for (ValueId v : graph.inputs) {
    const Value& value = graph.value(v);
    if (value.initializer || !CarriesGradient(graph, v)) continue;
    if (wanted(value.name, false)) s.trainable.push_back(v);
  }
  std::vector<ValueId> inits;
  for (size_t i = 0; i < graph.values.size(); ++i) {
    const Value& value = graph.values[i];
    if (value.initializer && !value.initializer->is_sparse && IsDifferentiableType(value.initializer->dtype)) {
      inits.push_back(static_cast<ValueId>(i));
    }
  }
  std::sort(inits.begin(), inits.end(), [&](ValueId a, ValueId b) {
    return graph.value(a).initializer->file_offset < graph.value(b).initializer->file_offset;
  });
  for (ValueId v : inits) {
    const std::string& name = graph.value(v).name;
    if (wanted(name, parameters == nullptr || parameter_set.count(name) != 0)) s.trainable.push_back(v);
  }
  if (s.trainable.empty()) {
    return InvalidInput(options.trainable.empty() && options.frozen.empty()
                            ? "the model has no float initializers to train; name trainable graph inputs with --trainable"
                            : "--trainable/--frozen leave no trainable tensor");
  }
  return Status::Ok();
}

void Reach(const Graph& graph, GradSelection& s) {
  const size_t nv = graph.values.size();
  s.forward_reach.assign(nv, 0);
  s.backward_need.assign(nv, 0);
  s.differentiated.assign(graph.nodes.size(), 0);
  // Outer-scope reads of subgraphs (If, Loop, Scan): gradient inputs like any other.
  std::vector<std::vector<ValueId>> outer(graph.nodes.size());
  for (const Node& node : graph.nodes) outer[node.id] = SubgraphOuterInputs(graph, node);
  for (ValueId v : s.trainable) s.forward_reach[v] = 1;
  for (NodeId n : s.topo_order) {
    const Node& node = graph.node(n);
    bool reached = false;
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const ValueId v = node.inputs[i];
      if (v != kNone && s.forward_reach[v] && MayCarryGradient(graph, v) && !IsStopEdge(node, static_cast<int>(i))) {
        reached = true;
      }
    }
    for (ValueId v : outer[n]) reached = reached || (s.forward_reach[v] && MayCarryGradient(graph, v));
    if (!reached) continue;
    for (ValueId v : node.outputs) {
      if (MayCarryGradient(graph, v)) s.forward_reach[v] = 1;
    }
  }
  // Seeds that no trainable tensor reaches get no gradient.
  std::vector<int> seeded;
  for (int i : s.seeded) {
    if (s.forward_reach[s.yield_inputs[i]]) seeded.push_back(i);
  }
  s.seeded = seeded;
  for (int i : s.seeded) s.backward_need[s.yield_inputs[i]] = 1;
  for (auto it = s.topo_order.rbegin(); it != s.topo_order.rend(); ++it) {
    const Node& node = graph.node(*it);
    bool needed = false;
    for (ValueId v : node.outputs) {
      if (v != kNone && s.backward_need[v] && s.forward_reach[v]) needed = true;
    }
    if (!needed) continue;
    bool has_input = false;
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const ValueId v = node.inputs[i];
      if (v == kNone || !MayCarryGradient(graph, v) || IsStopEdge(node, static_cast<int>(i))) continue;
      s.backward_need[v] = 1;
      has_input = has_input || s.forward_reach[v];
    }
    for (ValueId v : outer[*it]) {
      if (!MayCarryGradient(graph, v)) continue;
      s.backward_need[v] = 1;
      has_input = has_input || s.forward_reach[v];
    }
    s.differentiated[*it] = has_input ? 1 : 0;
  }
}

}  // namespace

Expected<GradSelection> SelectGradients(const Graph& graph, const GradOptions& options,
                                        const std::vector<std::string>* parameters) {
  GradSelection s;
  MEMOPT_ASSIGN_OR_RETURN(s.topo_order, TopologicalOrder(graph, {.extra_inputs = SubgraphOuterInputs}));
  MEMOPT_RETURN_IF_ERROR(SelectOutputs(graph, options, s));
  MEMOPT_RETURN_IF_ERROR(SelectTrainable(graph, options, parameters, s));
  Reach(graph, s);
  if (s.seeded.empty()) {
    if (!s.loss.empty()) {
      return InvalidInput("the loss '" + s.loss + "' does not depend on any trainable tensor");
    }
    return InvalidInput("no float graph output depends on a trainable tensor; nothing to differentiate");
  }
  // Every edge, whatever its type: which values the differentiated outputs depend on at all.
  std::vector<char> affects(graph.values.size(), 0);
  for (int i : s.seeded) affects[s.yield_inputs[i]] = 1;
  for (auto it = s.topo_order.rbegin(); it != s.topo_order.rend(); ++it) {
    const Node& node = graph.node(*it);
    bool needed = false;
    for (ValueId v : node.outputs) needed = needed || (v != kNone && affects[v]);
    if (!needed) continue;
    for (ValueId v : node.inputs) {
      if (v != kNone) affects[v] = 1;
    }
    for (ValueId v : SubgraphOuterInputs(graph, node)) affects[v] = 1;
  }
  std::vector<ValueId> used;
  for (ValueId v : s.trainable) {
    if (s.backward_need[v]) {
      used.push_back(v);
      continue;
    }
    // Tensors read only through stop edges (BatchNormalization running statistics, a Pow
    // exponent, Clip bounds) are not parameters: drop them silently. Readers whose outputs
    // reach no differentiated output (an export's unused copies of the statistics) do not count
    // when the tensor reaches one at all.
    bool only_stop_edges = true, any = false;
    for (const auto& [n, input] : graph.value(v).consumers) {
      const Node& node = graph.node(n);
      bool live = !affects[v];
      for (ValueId out : node.outputs) live = live || (out != kNone && affects[out]);
      if (!live) continue;
      any = true;
      only_stop_edges = only_stop_edges && IsStopEdge(node, input);
    }
    if (any && only_stop_edges) continue;
    (affects[v] ? s.nondifferentiable_trainable : s.unused_trainable).push_back(graph.value(v).name);
  }
  s.trainable = used;
  if (s.trainable.empty()) return InvalidInput("no trainable tensor affects the differentiated outputs");
  return s;
}

}  // namespace memopt::grad
