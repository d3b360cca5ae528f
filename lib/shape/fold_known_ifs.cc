#include "shape/fold_known_ifs.h"

#include <optional>
#include <set>
#include <unordered_map>

#include "ir/op_key.h"
#include "shape/shape_infer.h"

namespace memopt {
namespace {

constexpr int kMaxRounds = 8;

bool HasIf(const Graph& graph) {
  for (const Node& n : graph.nodes) {
    if (n.op_type == "If" && n.domain.empty()) return true;
  }
  return false;
}

bool HasSubgraph(const onnx::NodeProto& node) {
  for (const auto& a : node.attribute()) {
    if (a.has_g() || a.graphs_size() > 0) return true;
  }
  return false;
}

/// The condition's value when inference knows it.
std::optional<bool> KnownCondition(const Graph& inferred, const Node& node) {
  if (node.inputs.empty() || node.inputs[0] == kNone) return std::nullopt;
  const auto& known = inferred.value(node.inputs[0]).known_values;
  if (!known.has_value() || known->size() != 1) return std::nullopt;
  auto v = (*known)[0].AsInt();
  if (!v.has_value()) return std::nullopt;
  return *v != 0;
}

const onnx::GraphProto* Branch(const Node& node, bool condition) {
  const std::string name = condition ? "then_branch" : "else_branch";
  for (const auto& a : node.proto.attribute()) {
    if (a.name() == name && a.has_g()) return &a.g();
  }
  return nullptr;
}

class Splicer {
 public:
  explicit Splicer(Graph& graph) : graph_(graph) {}

  /// Appends the branch's nodes and the output Identities for `node` to `out`; false (nothing
  /// appended) when the branch cannot be spliced.
  bool Splice(const Node& node, const onnx::GraphProto& branch, std::vector<Node>& out) {
    if (branch.initializer_size() > 0 || branch.sparse_initializer_size() > 0 ||
        branch.output_size() != static_cast<int>(node.outputs.size())) {
      return false;
    }
    std::unordered_map<std::string, std::string> rename;
    bool renamed = false, nested = false;
    for (const auto& bn : branch.node()) {
      nested = nested || HasSubgraph(bn);
      for (const auto& o : bn.output()) {
        if (o.empty() || rename.count(o)) continue;
        std::string fresh = o;
        for (int k = 1; graph_.FindValue(fresh) != kNone || taken_.count(fresh); ++k)
          fresh = o + "__" + std::to_string(k);
        taken_.insert(fresh);
        renamed = renamed || fresh != o;
        rename[o] = fresh;
      }
    }
    if (renamed && nested) return false;  // nested subgraphs would still read the old names
    auto mapped = [&rename](const std::string& n) {
      auto it = rename.find(n);
      return it == rename.end() ? n : it->second;
    };
    for (const auto& bn : branch.node()) {
      onnx::NodeProto p = bn;
      for (int i = 0; i < p.input_size(); ++i) p.set_input(i, mapped(p.input(i)));
      for (int i = 0; i < p.output_size(); ++i) p.set_output(i, mapped(p.output(i)));
      out.push_back(MakeNode(std::move(p), node.module));
    }
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      if (node.outputs[i] == kNone) continue;
      onnx::NodeProto identity;
      identity.set_op_type("Identity");
      identity.set_name(node.name.empty() ? std::string() : node.name + "/output_" + std::to_string(i));
      identity.add_input(mapped(branch.output(static_cast<int>(i)).name()));
      identity.add_output(graph_.value(node.outputs[i]).name);
      out.push_back(MakeNode(std::move(identity), node.module));
    }
    return true;
  }

 private:
  Node MakeNode(onnx::NodeProto proto, const std::string& module) {
    Node n;
    n.name = proto.name();
    n.op_type = proto.op_type();
    n.domain = NormalizeDomain(proto.domain());
    n.module = module;
    for (const auto& in : proto.input()) n.inputs.push_back(in.empty() ? kNone : graph_.GetOrAddValue(in));
    for (const auto& o : proto.output()) n.outputs.push_back(o.empty() ? kNone : graph_.GetOrAddValue(o));
    proto.clear_input();  // the edges live in n.inputs / n.outputs only
    proto.clear_output();
    n.proto = std::move(proto);
    return n;
  }

  Graph& graph_;
  std::set<std::string> taken_;
};

}  // namespace

Expected<int> FoldKnownIfs(Graph& graph) {
  int total = 0;
  for (int round = 0; round < kMaxRounds && HasIf(graph); ++round) {
    Graph inferred = graph;
    if (!InferShapes(inferred).ok()) break;  // the analysis reports the problem later
    Splicer splicer(graph);
    std::vector<Node> nodes;
    nodes.reserve(graph.nodes.size());
    int folded = 0;
    for (Node& node : graph.nodes) {
      if (node.op_type == "If" && node.domain.empty()) {
        const std::optional<bool> condition = KnownCondition(inferred, node);
        const onnx::GraphProto* branch = condition ? Branch(node, *condition) : nullptr;
        if (branch != nullptr && splicer.Splice(node, *branch, nodes)) {
          ++folded;
          continue;
        }
      }
      nodes.push_back(std::move(node));
    }
    graph.nodes = std::move(nodes);
    for (size_t i = 0; i < graph.nodes.size(); ++i) graph.nodes[i].id = static_cast<NodeId>(i);
    graph.RebuildLinks();
    ResolveSinceVersions(graph);
    if (folded == 0) break;
    total += folded;
  }
  return total;
}

}  // namespace memopt
