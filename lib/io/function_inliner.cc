#include "io/function_inliner.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "io/newer_proto_fields.h"
#include "io/torch_module_names.h"

namespace memopt::io {
namespace {

/// Inlining may not grow the graph past this many nodes (a guard against call trees that
/// multiply: f calls g twice, g calls h twice, ...); real models stay far below.
constexpr size_t kMaxInlinedNodes = size_t{4} * 1000 * 1000;
/// Calls may nest this deep (each level is a few stack frames).
constexpr size_t kMaxCallDepth = 200;

std::string NormalDomain(const std::string& d) { return d == "ai.onnx" ? std::string() : d; }
std::string Quote(const std::string& s) { return "'" + s + "'"; }

using FunctionKey = std::tuple<std::string, std::string, std::string>;  // domain, name, overload

/// Names visible in one graph or function body. Lookups walk out to enclosing scopes; a closed
/// scope (a function body) does not see past itself.
struct Scope {
  const Scope* parent = nullptr;
  bool closed = false;       ///< a function body: names it does not bind are undefined
  bool rename_defs = false;  ///< names defined here get fresh names (inside a function body)
  std::unordered_map<std::string, std::string> names;  ///< as written -> as emitted

  std::optional<std::string> Lookup(const std::string& name) const {
    for (const Scope* s = this; s != nullptr; s = s->parent) {
      auto it = s->names.find(name);
      if (it != s->names.end()) return it->second;
      if (s->closed) return std::nullopt;
    }
    return name;  // the main graph's names are emitted as they are
  }
};

/// The attribute values a function body's ref_attr_name references resolve to.
using AttributeBinding = std::map<std::string, onnx::AttributeProto>;

class Inliner {
 public:
  explicit Inliner(RawModel& raw) : raw_(raw) {}

  Expected<InlineStats> Run() {
    for (const onnx::FunctionProto& f : raw_.functions) {
      functions_.emplace(FunctionKey{NormalDomain(f.domain()), f.name(), FunctionOverload(f)}, &f);
    }
    for (const auto& [domain, version] : raw_.opsets) model_opsets_[NormalDomain(domain)] = version;
    CollectMainNames();
    Scope main;
    std::vector<onnx::NodeProto> nodes;
    std::vector<std::string> modules;
    nodes.reserve(raw_.graph.nodes.size());
    MEMOPT_RETURN_IF_ERROR(EmitNodes(raw_.graph.nodes, main, nullptr, "", nodes, modules));
    raw_.graph.nodes = std::move(nodes);
    raw_.graph.node_modules = std::move(modules);
    stats_.functions.assign(inlined_.begin(), inlined_.end());
    return std::move(stats_);
  }

 private:
  void CollectMainNames() {
    for (const auto& vi : raw_.graph.inputs) used_values_.insert(vi.name());
    for (const auto& vi : raw_.graph.outputs) used_values_.insert(vi.name());
    for (const auto& init : raw_.graph.initializers) used_values_.insert(init.meta.name);
    for (const auto& node : raw_.graph.nodes) CollectNodeNames(node);
  }

  void CollectNodeNames(const onnx::NodeProto& node) {
    if (!node.name().empty()) used_nodes_.insert(node.name());
    for (const auto& n : node.input()) used_values_.insert(n);
    for (const auto& n : node.output()) used_values_.insert(n);
    for (const auto& a : node.attribute()) {
      auto graph_names = [&](const onnx::GraphProto& g) {
        for (const auto& vi : g.input()) used_values_.insert(vi.name());
        for (const auto& t : g.initializer()) used_values_.insert(t.name());
        for (const auto& n : g.node()) CollectNodeNames(n);
      };
      if (a.has_g()) graph_names(a.g());
      for (const auto& g : a.graphs()) graph_names(g);
    }
  }

  static std::string Fresh(const std::string& base, std::unordered_set<std::string>& used) {
    std::string name = base;
    for (int k = 1; used.count(name); ++k) name = base + "__" + std::to_string(k);
    used.insert(name);
    return name;
  }

  /// Defines `name` in `scope`: a fresh name inside function bodies, the name itself elsewhere.
  std::string Define(const std::string& name, Scope& scope) {
    if (name.empty() || !scope.rename_defs) return name;
    auto it = scope.names.find(name);
    if (it != scope.names.end()) return it->second;  // a formal output bound to the caller's name
    return scope.names[name] = Fresh(name, used_values_);
  }

  Status Undefined(const std::string& name, const std::string& what) const {
    return InvalidInput("model-local function " + Quote(stack_.empty() ? std::string() : std::get<1>(stack_.back())) +
                        " reads " + Quote(name) + " in " + what +
                        ", which it neither receives as an input nor computes; fix the function in the model");
  }

  /// `nodes`: the main graph's vector or a body's RepeatedPtrField.
  template <typename Nodes>
  Status EmitNodes(const Nodes& nodes, Scope& scope, const AttributeBinding* binding, const std::string& module,
                   std::vector<onnx::NodeProto>& out, std::vector<std::string>& modules) {
    for (const onnx::NodeProto& node : nodes) {
      MEMOPT_RETURN_IF_ERROR(EmitNode(node, scope, binding, module, out, modules));
    }
    return Status::Ok();
  }

  Status EmitNode(const onnx::NodeProto& original, Scope& scope, const AttributeBinding* binding,
                  const std::string& module, std::vector<onnx::NodeProto>& out, std::vector<std::string>& modules) {
    if (out.size() >= kMaxInlinedNodes) {
      return InvalidInput("inlining the model-local functions would make more than " +
                          std::to_string(kMaxInlinedNodes) + " nodes");
    }
    onnx::NodeProto node = original;
    const std::string what = "node " + Quote(node.name().empty() ? node.op_type() : node.name());
    for (int i = 0; i < node.input_size(); ++i) {
      if (node.input(i).empty()) continue;
      auto name = scope.Lookup(node.input(i));
      if (!name) return Undefined(node.input(i), what);
      node.set_input(i, *name);
    }
    MEMOPT_RETURN_IF_ERROR(ResolveAttributes(node, scope, binding, module));
    for (int i = 0; i < node.output_size(); ++i) node.set_output(i, Define(node.output(i), scope));
    const std::string metadata_module = ModuleFromMetadata(NodeMetadata(node));

    auto callee = functions_.find(FunctionKey{NormalDomain(node.domain()), node.op_type(), NodeOverload(node)});
    if (callee != functions_.end()) return Expand(node, *callee->second, metadata_module, module, out, modules);
    if (scope.rename_defs && !node.name().empty()) node.set_name(Fresh(node.name(), used_nodes_));
    out.push_back(std::move(node));
    modules.push_back(metadata_module.empty() ? module : metadata_module);
    return Status::Ok();
  }

  /// Replaces ref_attr_name attributes by their bound values and renames inside subgraphs.
  Status ResolveAttributes(onnx::NodeProto& node, Scope& scope, const AttributeBinding* binding,
                           const std::string& module) {
    google::protobuf::RepeatedPtrField<onnx::AttributeProto> resolved;
    for (const onnx::AttributeProto& a : node.attribute()) {
      if (!a.ref_attr_name().empty() && binding != nullptr) {
        auto it = binding->find(a.ref_attr_name());
        if (it == binding->end()) continue;  // neither given nor defaulted: the attribute is absent
        onnx::AttributeProto value = it->second;
        value.set_name(a.name());
        *resolved.Add() = std::move(value);
        continue;
      }
      onnx::AttributeProto copy = a;
      if (copy.has_g()) MEMOPT_RETURN_IF_ERROR(EmitSubgraph(*copy.mutable_g(), scope, binding, module));
      for (auto& g : *copy.mutable_graphs()) MEMOPT_RETURN_IF_ERROR(EmitSubgraph(g, scope, binding, module));
      *resolved.Add() = std::move(copy);
    }
    *node.mutable_attribute() = std::move(resolved);
    return Status::Ok();
  }

  Status EmitSubgraph(onnx::GraphProto& g, Scope& outer, const AttributeBinding* binding, const std::string& module) {
    Scope inner;
    inner.parent = &outer;
    inner.rename_defs = outer.rename_defs;
    for (auto& vi : *g.mutable_input()) vi.set_name(Define(vi.name(), inner));
    for (auto& t : *g.mutable_initializer()) t.set_name(Define(t.name(), inner));
    std::vector<onnx::NodeProto> nodes;
    std::vector<std::string> unused_modules;
    MEMOPT_RETURN_IF_ERROR(EmitNodes(g.node(), inner, binding, module, nodes, unused_modules));
    g.clear_node();
    for (auto& n : nodes) *g.add_node() = std::move(n);
    for (auto& vi : *g.mutable_output()) {
      auto name = inner.Lookup(vi.name());
      if (!name) return Undefined(vi.name(), "a subgraph output");
      vi.set_name(*name);
    }
    google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> infos;
    for (const auto& vi : g.value_info()) {
      auto name = inner.Lookup(vi.name());
      if (!name) continue;
      onnx::ValueInfoProto copy = vi;
      copy.set_name(*name);
      *infos.Add() = std::move(copy);
    }
    *g.mutable_value_info() = std::move(infos);
    return Status::Ok();
  }

  /// Emits the body of `f` for the call `call` (inputs, outputs and attributes already resolved).
  /// The body's module: the call's metadata's (`metadata_module`), else the one `f`'s name says,
  /// else the enclosing one (`caller_module`: torch_lib functions implement one op).
  Status Expand(const onnx::NodeProto& call, const onnx::FunctionProto& f, const std::string& metadata_module,
                const std::string& caller_module, std::vector<onnx::NodeProto>& out,
                std::vector<std::string>& modules) {
    const FunctionKey key{NormalDomain(f.domain()), f.name(), FunctionOverload(f)};
    if (std::find(stack_.begin(), stack_.end(), key) != stack_.end()) {
      std::string chain;
      for (const auto& k : stack_) chain += Quote(std::get<1>(k)) + " -> ";
      return InvalidInput("model-local function " + Quote(f.name()) + " calls itself (" + chain + Quote(f.name()) +
                          "); recursive functions cannot be inlined");
    }
    if (stack_.size() >= kMaxCallDepth) {
      return InvalidInput("model-local functions nest deeper than " + std::to_string(kMaxCallDepth) +
                          " calls (at " + Quote(f.name()) + ")");
    }
    ++stats_.calls;
    inlined_.insert(std::get<0>(key) + ":" + f.name());
    MergeOpsets(f);

    AttributeBinding binding;
    for (const auto& a : FunctionAttributeDefaults(f)) binding[a.name()] = a;
    for (const auto& a : call.attribute()) binding[a.name()] = a;

    Scope body;
    body.closed = true;
    body.rename_defs = true;
    std::set<std::string> formal_inputs;
    for (int i = 0; i < f.input_size(); ++i) {
      body.names[f.input(i)] = i < call.input_size() ? call.input(i) : std::string();
      formal_inputs.insert(f.input(i));
    }
    std::vector<std::pair<std::string, std::string>> passthrough;  // formal input -> actual output
    for (int i = 0; i < f.output_size(); ++i) {
      const std::string actual = i < call.output_size() && !call.output(i).empty()
                                     ? call.output(i)
                                     : Fresh(f.output(i), used_values_);
      if (formal_inputs.count(f.output(i))) {
        passthrough.emplace_back(f.output(i), actual);
      } else {
        body.names[f.output(i)] = actual;
      }
    }
    std::string module = metadata_module;
    if (module.empty()) module = ModuleFromFunctionName(f.name());
    if (module.empty()) module = caller_module;
    stack_.push_back(key);
    MEMOPT_RETURN_IF_ERROR(EmitNodes(f.node(), body, &binding, module, out, modules));
    stack_.pop_back();
    for (const auto& [formal, actual] : passthrough) {
      onnx::NodeProto identity;
      identity.set_op_type("Identity");
      identity.set_name(Fresh(f.name() + "_passthrough", used_nodes_));
      identity.add_input(body.names.at(formal));
      identity.add_output(actual);
      out.push_back(std::move(identity));
      modules.push_back(module);
    }
    for (const auto& vi : FunctionValueInfo(f)) {
      auto it = body.names.find(vi.name());
      if (it == body.names.end() || it->second.empty()) continue;
      onnx::ValueInfoProto copy = vi;
      copy.set_name(it->second);
      raw_.graph.value_info.push_back(std::move(copy));
    }
    return Status::Ok();
  }

  void MergeOpsets(const onnx::FunctionProto& f) {
    for (const auto& opset : f.opset_import()) {
      const std::string domain = NormalDomain(opset.domain());
      auto [it, added] = model_opsets_.emplace(domain, opset.version());
      if (added) {
        raw_.opsets.emplace_back(domain, opset.version());
      } else if (it->second != opset.version() && warned_.insert(domain).second) {
        stats_.warnings.push_back("model-local function " + Quote(f.name()) + " imports version " +
                                  std::to_string(opset.version()) + " of " +
                                  (domain.empty() ? std::string("the ai.onnx domain") : "domain " + Quote(domain)) +
                                  ", the model version " + std::to_string(it->second) +
                                  "; its nodes are read with the model's version");
      }
    }
  }

  RawModel& raw_;
  std::map<FunctionKey, const onnx::FunctionProto*> functions_;
  std::map<std::string, int64_t> model_opsets_;
  std::unordered_set<std::string> used_values_, used_nodes_;
  std::vector<FunctionKey> stack_;
  std::set<std::string> inlined_, warned_;
  InlineStats stats_;
};

}  // namespace

Expected<InlineStats> InlineLocalFunctions(RawModel& raw) {
  if (raw.functions.empty()) {
    raw.graph.node_modules.clear();
    for (const auto& node : raw.graph.nodes) raw.graph.node_modules.push_back(ModuleFromMetadata(NodeMetadata(node)));
    return InlineStats{};
  }
  return Inliner(raw).Run();
}

}  // namespace memopt::io
