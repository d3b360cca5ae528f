// BuildGradientGraph: selection -> forward outputs the gradient ops need -> YieldOp -> one rule
// per differentiated node in reverse topological order, partial gradients summed -> layout.
#include "grad/grad_builder.h"

#include <algorithm>
#include <map>
#include <set>

#include "grad/gelu_fusion.h"
#include "grad/grad_context.h"
#include "grad/grad_selection.h"
#include "grad/export_mismatches.h"
#include "grad/tied_parameters.h"
#include "ir/op_key.h"
#include "shape/shape_infer.h"

namespace memopt {
namespace {

using namespace grad;

/// Gradient bookkeeping of one tensor.
struct GradState {
  int expected = 0;  ///< partial gradients from consumers
  std::vector<std::string> received;
  std::string seed;        ///< YieldOp output feeding this tensor's gradient ("" if none)
  std::string sum_name;    ///< output of the Sum of several partials
  std::string final_name;  ///< after Finalize
  bool finalized = false;
};

class Builder {
 public:
  Builder(const Model& forward, const GradOptions& options) : model_(forward), options_(options) {}

  Expected<GradResult> Run() {
    Graph& g = model_.graph;
    MEMOPT_RETURN_IF_ERROR(CheckForwardOnly());
    MEMOPT_ASSIGN_OR_RETURN(torch_, RestoreTorchParameters(model_));
    if (options_.fuse_gelu) fused_gelu_ = FuseGelu(g);
    auto inferred = InferShapes(g);
    // The model's own errors read as in every other subcommand (they name the node).
    if (!inferred.ok()) return inferred.status();
    MEMOPT_ASSIGN_OR_RETURN(sel_, SelectGradients(g, options_, torch_.has_signature ? &torch_.parameters : nullptr));
    MEMOPT_RETURN_IF_ERROR(CheckRules());
    tied_ = FindTiedParameters(g, sel_.trainable);
    export_mismatches_ = FindExportMismatches(model_, sel_);
    first_new_value_ = static_cast<ValueId>(g.values.size());
    if (AddForwardOutputs()) {
      sel_.forward_reach.resize(g.values.size(), 0);
      sel_.backward_need.resize(g.values.size(), 0);
      g.RebuildLinks();
      auto again = InferShapes(g);
      if (!again.ok()) return again.status().WithContext("shape inference of the forward model");
    }
    if (g.opsets.count(kMsDomain) == 0) g.opsets[kMsDomain] = 1;
    GraphEmitter emitter(g);
    emitter_ = &emitter;
    shared_.emitter = &emitter;
    shared_.onnx_opset = g.OpsetVersion("");
    MEMOPT_RETURN_IF_ERROR(PlanGradients());
    const NodeId yield = EmitYield();
    for (auto it = sel_.topo_order.rbegin(); it != sel_.topo_order.rend(); ++it) {
      if (sel_.differentiated[*it]) MEMOPT_RETURN_IF_ERROR(Differentiate(*it));
    }
    for (const Node& n : g.nodes) {  // memopt's own gradient ops (ops/recurrent) need their opset import
      if (n.domain == kMemoptDomain && g.opsets.count(std::string(kMemoptDomain)) == 0) g.opsets[std::string(kMemoptDomain)] = 1;
    }
    std::vector<ValueId> grad_outputs;
    for (ValueId x : sel_.trainable) {
      const std::string name = Finalize(x);
      if (name.empty()) return InternalError("no gradient was built for '" + g.value(x).name + "'");
      const std::string want = g.value(x).name + "_grad";
      if (name != want) {
        emitter.Add("Identity_" + want, "Identity", "", {name}, {want});
        emitter.SetInfo(want, g.value(x).info.dtype, g.value(x).info.shape);
      }
      grad_outputs.push_back(g.FindValue(want));
    }
    return Layout(yield, grad_outputs);
  }

 private:
  Status CheckForwardOnly() const {
    for (const Node& node : model_.graph.nodes) {
      const bool grad_op =
          node.op_type.size() > 4 && node.op_type.rfind("Grad") != std::string::npos && node.domain == kMsDomain;
      if (node.op_type == "YieldOp" || grad_op) {
        return InvalidInput("the model already has a backward pass (node " + node.Describe() +
                            "); memopt grad takes a forward-only model");
      }
    }
    return Status::Ok();
  }

  Status CheckRules() const {
    const Graph& g = model_.graph;
    std::map<std::string, std::string> missing;
    for (const Node& node : g.nodes) {
      if (!sel_.differentiated[node.id] || FindGradRule(node) != nullptr) continue;
      const std::string op = OpKey::Of(node).ToString();
      missing.emplace(op, node.name.empty() ? node.op_type + "#" + std::to_string(node.id) : node.name);
    }
    if (missing.empty()) return Status::Ok();
    std::string list;
    for (const auto& [op, node] : missing) list += (list.empty() ? "" : ", ") + op + " (node '" + node + "')";
    return Unsupported("no gradient rule for " + list +
                       "; these ops lie on the path from the trainable tensors to the loss (freeze the tensors "
                       "upstream with --frozen, or see `docs/grad.md` for the supported ops)");
  }

  /// Adds the forward outputs gradient ops read; true when something was added.
  bool AddForwardOutputs() {
    Graph& g = model_.graph;
    bool changed = false;
    std::set<std::string> names;
    for (const Value& v : g.values) names.insert(v.name);
    auto add_output = [&](Node& node, size_t index, const std::string& base) {
      if (index < node.outputs.size() && node.outputs[index] != kNone) return;
      std::string name = base;
      for (int k = 1; names.count(name); ++k) name = base + "_" + std::to_string(k);
      names.insert(name);
      while (node.outputs.size() <= index) node.outputs.push_back(kNone);
      node.outputs[index] = g.GetOrAddValue(name);
      changed = true;
    };
    for (Node& node : g.nodes) {
      if (!sel_.differentiated[node.id]) continue;
      const GradRuleInfo* info = FindGradRule(node);
      if (info == nullptr) continue;
      for (const SavedOutput& saved : info->saved_outputs) {
        if (saved.when != nullptr && !saved.when(g, node)) continue;
        const std::string base = saved.after_input0                                 ? g.value(node.inputs[0]).name
                                 : node.outputs.empty() || node.outputs[0] == kNone ? node.name
                                                                                    : g.value(node.outputs[0]).name;
        add_output(node, static_cast<size_t>(saved.index), base + saved.suffix);
      }
    }
    return changed;
  }

  /// Expected partial-gradient counts and the names of the seeds.
  Status PlanGradients() {
    Graph& g = model_.graph;
    trainable_set_.insert(sel_.trainable.begin(), sel_.trainable.end());
    state_.resize(g.values.size());
    for (NodeId n : sel_.topo_order) {
      if (!sel_.differentiated[n]) continue;
      const Node& node = g.node(n);
      for (size_t i = 0; i < node.inputs.size(); ++i) {
        if (Required(node, static_cast<int>(i))) ++state_[node.inputs[i]].expected;
      }
    }
    for (ValueId x : sel_.trainable) {
      const std::string want = g.value(x).name + "_grad";
      if (!emitter_->Reserve(want)) {
        return InvalidInput("cannot name the gradient of '" + g.value(x).name + "': the model already has a tensor '" +
                            want + "'");
      }
    }
    for (int i : sel_.seeded) {
      const ValueId y = sel_.yield_inputs[i];
      const std::string base = g.value(y).name + "_grad";
      state_[y].seed = emitter_->UniqueName(state_[y].expected > 0 ? base + "_external" : base);
      if (state_[y].expected == 0) full_shape_.push_back(i);
    }
    return Status::Ok();
  }

  bool Required(const Node& node, int i) const {
    const ValueId v = node.inputs[i];
    return v != kNone && sel_.forward_reach[v] && CarriesGradient(model_.graph, v) && !IsStopEdge(node, i);
  }

  NodeId EmitYield() {
    Graph& g = model_.graph;
    std::vector<std::string> inputs, outputs;
    std::vector<int64_t> non_diff;
    for (size_t i = 0; i < sel_.yield_inputs.size(); ++i) {
      const ValueId y = sel_.yield_inputs[i];
      inputs.push_back(g.value(y).name);
      if (std::find(sel_.seeded.begin(), sel_.seeded.end(), static_cast<int>(i)) == sel_.seeded.end()) {
        non_diff.push_back(static_cast<int64_t>(i));
      } else {
        outputs.push_back(state_[y].seed);
      }
    }
    std::vector<onnx::AttributeProto> attrs;
    attrs.push_back(AttrInts("full_shape_outputs", std::vector<int64_t>(full_shape_.begin(), full_shape_.end())));
    if (!non_diff.empty()) attrs.push_back(AttrInts("non_differentiable_outputs", non_diff));
    const NodeId id = emitter_->Add(emitter_->UniqueName("YieldOp"), "YieldOp", kMsDomain, inputs, outputs, attrs);
    for (int i : sel_.seeded) {
      const ValueId y = sel_.yield_inputs[i];
      emitter_->SetInfo(state_[y].seed, g.value(y).info.dtype, g.value(y).info.shape);
    }
    return id;
  }

  /// The gradient of `v` once every consumer has contributed: partials summed, the external seed
  /// added. "" when `v` gets no gradient.
  std::string Finalize(ValueId v) {
    GradState& s = state_[v];
    if (s.finalized) return s.final_name;
    s.finalized = true;
    Graph& g = model_.graph;
    const std::string base = g.value(v).name + "_grad";
    std::string internal;
    if (s.received.size() == 1) {
      internal = s.received[0];
    } else if (s.received.size() > 1) {
      internal = s.sum_name;
      emitter_->Add("AccumulateGrad_" + internal, "Sum", "", s.received, {internal});
      emitter_->SetInfo(internal, g.value(v).info.dtype, g.value(v).info.shape);
    }
    if (!s.seed.empty() && !internal.empty()) {
      s.final_name = emitter_->UniqueName(base + "_add_output");
      emitter_->Add(base + "_add", "Add", "", {s.seed, internal}, {s.final_name});
      emitter_->SetInfo(s.final_name, g.value(v).info.dtype, g.value(v).info.shape);
    } else {
      s.final_name = internal.empty() ? s.seed : internal;
    }
    return s.final_name;
  }

  /// Name of the next partial gradient of `v`: `<v>_grad` when it is the only one, otherwise
  /// `<v>_grad_<k>` (summed into `<v>_grad` by Finalize).
  std::string NextPartialName(ValueId v) {
    GradState& s = state_[v];
    const std::string base = model_.graph.value(v).name + "_grad";
    const bool trainable = trainable_set_.count(v) != 0;
    if (s.expected == 1) return trainable ? base : emitter_->UniqueName(base);
    if (s.sum_name.empty()) s.sum_name = trainable ? base : emitter_->UniqueName(base);
    return emitter_->UniqueName(base + "_" + std::to_string(s.received.size()));
  }

  std::string PrefixFor(const Node& node) {
    const std::string base = node.name.empty() ? node.op_type + "_" + std::to_string(node.id) : node.name;
    std::string prefix = base + "_Grad/";
    for (int k = 1; !assigned_prefixes_.insert(prefix).second; ++k) {
      prefix = base + "_" + std::to_string(k) + "_Grad/";
    }
    return prefix;
  }

  Status Differentiate(NodeId n) {
    Graph& g = model_.graph;
    const Node node = g.node(n);  // a copy: rules append to g.nodes
    std::vector<std::string> go(node.outputs.size());
    bool any = false;
    for (size_t j = 0; j < node.outputs.size(); ++j) {
      const ValueId v = node.outputs[j];
      if (v == kNone || !sel_.forward_reach[v] || !sel_.backward_need[v]) continue;
      go[j] = Finalize(v);
      any = any || !go[j].empty();
    }
    if (!any) return Status::Ok();
    std::vector<std::string> gi(node.inputs.size());
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      if (Required(node, static_cast<int>(i))) gi[i] = NextPartialName(node.inputs[i]);
    }
    const GradRuleInfo* info = FindGradRule(node);
    NodeGrad ng(shared_, node, PrefixFor(node), go, gi);
    Status status = info->rule(ng);
    if (!status.ok()) return status;
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      if (gi[i].empty()) continue;
      const ValueId produced = g.FindValue(gi[i]);
      if (produced == kNone || g.value(produced).producer == kNone) {
        return InternalError("the gradient rule of node " + node.Describe() + " did not produce '" + gi[i] + "'");
      }
      const Value& in = g.value(node.inputs[i]);
      emitter_->SetInfo(gi[i], in.info.dtype, in.info.shape);
      state_[node.inputs[i]].received.push_back(gi[i]);
    }
    return Status::Ok();
  }

  Expected<GradResult> Layout(NodeId yield, const std::vector<ValueId>& grad_outputs) {
    Graph& g = model_.graph;
    const std::vector<NodeId> order = emitter_->FinalOrder(sel_.topo_order, yield);
    std::vector<Node> nodes;
    nodes.reserve(order.size());
    GradResult result;
    for (NodeId old : order) {
      Node node = std::move(g.nodes[old]);
      node.id = static_cast<NodeId>(nodes.size());
      if (old == yield) result.yield_node = node.id;
      nodes.push_back(std::move(node));
    }
    g.nodes = std::move(nodes);
    result.forward_nodes = result.yield_node;
    result.backward_nodes = static_cast<int>(g.nodes.size()) - result.yield_node - 1;
    std::vector<ValueId> outputs;
    if (!sel_.loss.empty()) outputs.push_back(g.FindValue(sel_.loss));
    outputs.insert(outputs.end(), grad_outputs.begin(), grad_outputs.end());
    g.outputs = outputs;
    g.RebuildLinks();
    auto stats = InferShapes(g);
    if (!stats.ok()) {
      return InternalError("shape inference of the training graph failed: " + stats.status().message());
    }
    for (const std::string& op : stats->ops_without_rule) {
      result.warnings.push_back("no shape rule for " + op + " in the training graph");
    }
    result.first_new_value = first_new_value_;
    result.fused_gelu = fused_gelu_;
    result.emitted_for = std::move(shared_.emitted_for);
    result.loss = sel_.loss;
    for (int i : sel_.seeded) result.seeded_outputs.push_back(g.value(sel_.yield_inputs[i]).name);
    for (ValueId x : sel_.trainable) result.gradients.push_back(g.value(x).name);
    result.unused_trainable = sel_.unused_trainable;
    result.nondifferentiable_trainable = sel_.nondifferentiable_trainable;
    result.tied_parameters = tied_;
    result.torch_parameters = torch_;
    result.export_mismatches = export_mismatches_;
    result.model = std::move(model_);
    return result;
  }

  Model model_;
  GradOptions options_;
  GradSelection sel_;
  std::vector<TiedParameter> tied_;
  TorchParameterStats torch_;
  std::vector<std::string> export_mismatches_;
  GraphEmitter* emitter_ = nullptr;
  GradShared shared_;
  std::vector<GradState> state_;
  std::vector<int> full_shape_;
  ValueId first_new_value_ = 0;
  int fused_gelu_ = 0;
  std::set<std::string> assigned_prefixes_;
  std::set<ValueId> trainable_set_;
};

}  // namespace

Expected<GradResult> BuildGradientGraph(const Model& forward, const GradOptions& options) {
  try {
    Builder builder(forward, options);
    return builder.Run();
  } catch (const std::bad_alloc&) {
    return InvalidInput("out of memory while building the gradient graph");
  } catch (const std::exception& e) {
    return InternalError(std::string("unexpected error while building the gradient graph: ") + e.what());
  }
}

}  // namespace memopt
