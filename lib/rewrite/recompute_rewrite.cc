#include "rewrite/recompute_rewrite.h"

#include <string>
#include <unordered_set>
#include <vector>

#include "analysis/exec_order.h"

namespace memopt {
namespace {

/// Node names of the clones (RewriteSpec::clones order): "<node>_recompute" (RecomputeName), as ORT names them,
/// except that every name is unique in the written graph. ORT names the clone of an unnamed node
/// "_recompute" (several clones then share it and ORT itself refuses the model); memopt uses the
/// node's first output name instead, and appends "_1", "_2", ... where a name is taken.
std::vector<std::string> CloneNodeNames(const Graph& graph, const RewriteSpec& spec) {
  std::unordered_set<std::string> taken;
  for (const Node& n : graph.nodes) {
    if (!n.name.empty()) taken.insert(n.name);
  }
  std::vector<std::string> names;
  names.reserve(spec.clones.size());
  for (const CloneSpec& clone : spec.clones) {
    const Node& src = graph.nodes[clone.original];
    std::string base = src.name;
    if (base.empty()) {
      for (ValueId v : src.outputs) {
        if (v != kNone && !graph.values[v].name.empty()) {
          base = graph.values[v].name;
          break;
        }
      }
    }
    if (base.empty()) base = src.op_type;
    const std::string first = RecomputeName(base, clone.copy);
    std::string name = first;
    for (int i = 1; taken.count(name) != 0; ++i) name = first + "_" + std::to_string(i);
    taken.insert(name);
    names.push_back(std::move(name));
  }
  return names;
}

}  // namespace

bool IsYieldStyle(const Graph& graph, const Boundary& boundary) {
  if (boundary.node == kNone) return false;
  return boundary.kind == Boundary::Kind::kYieldOp ||
         (boundary.kind == Boundary::Kind::kOverride && graph.nodes[boundary.node].op_type == "YieldOp");
}

void SetDropoutSeed(const Graph& graph, Node& node) {
  if (node.HasAttr("seed")) return;
  std::string out0;
  for (ValueId v : node.outputs) {
    if (v != kNone) {
      out0 = graph.value(v).name;
      break;
    }
  }
  onnx::AttributeProto* attr = node.proto.add_attribute();
  attr->set_name("seed");
  attr->set_type(onnx::AttributeProto::INT);
  attr->set_i(DropoutSeedFor(out0));
}

Expected<std::vector<NodeId>> RewriteBaseOrder(const Graph& graph, const ScanResult& scan) {
  if (IsYieldStyle(graph, scan.boundary)) return TopologicalOrder(graph);
  return scan.order.order;
}

RewrittenGraph MaterializeRewrite(const Graph& graph, const ScanResult& scan, const RewriteSpec& spec,
                                  const std::vector<int32_t>& node_order, bool full) {
  RewrittenGraph out;
  Graph& g = out.graph;
  g.name = graph.name;
  g.inputs = graph.inputs;
  g.outputs = graph.outputs;
  g.opsets = graph.opsets;

  // Values: the originals keep their ids, clone values are appended.
  if (full) {
    g.values = graph.values;
    g.values.reserve(spec.num_values());
    std::vector<int32_t> copy(spec.clone_values.size(), 0);  // per clone value: its clone's copy
    for (const CloneSpec& clone : spec.clones) {
      for (ValueId o : clone.outputs) {
        if (o != kNone) copy[o - spec.num_original_values] = clone.copy;
      }
    }
    for (size_t c = 0; c < spec.clone_values.size(); ++c) {
      const ValueId src = spec.clone_values[c];
      Value v;
      v.name = RecomputeName(graph.values[src].name, copy[c]);
      v.info = graph.values[src].info;
      v.known_values = graph.values[src].known_values;
      g.values.push_back(std::move(v));
    }
  } else {
    g.values.resize(spec.num_values());
  }

  const std::vector<std::string> clone_names = full ? CloneNodeNames(graph, spec) : std::vector<std::string>{};
  out.new_id.assign(graph.nodes.size(), kNone);
  out.clone_id.assign(spec.clones.size(), kNone);
  g.nodes.resize(node_order.size());
  std::vector<char> seeded(graph.nodes.size(), 0);
  for (NodeId n : spec.seeded_dropouts) seeded[n] = 1;
  for (size_t i = 0; i < node_order.size(); ++i) {
    const int32_t ref = node_order[i];
    const NodeId id = static_cast<NodeId>(i);
    Node& node = g.nodes[i];
    if (ref >= 0) {
      out.new_id[ref] = id;
      const Node& src = graph.nodes[ref];
      if (full) {
        node = src;
        if (seeded[ref]) SetDropoutSeed(graph, node);
      } else {
        node.op_type = src.op_type;
        node.inputs = src.inputs;
        node.outputs = src.outputs;
      }
      node.id = id;
    } else {
      const int32_t k = -ref - 1;
      out.clone_id[k] = id;
      const CloneSpec& clone = spec.clones[k];
      const Node& src = graph.nodes[clone.original];
      if (full) {
        node = src;
        if (seeded[clone.original]) SetDropoutSeed(graph, node);
        node.name = clone_names[static_cast<size_t>(k)];
        node.proto.set_name(node.name);
        node.proto.set_doc_string("Recompute of " +
                                  (src.name.empty() ? "an unnamed " + src.op_type + " node" : src.name));
      } else {
        node.op_type = src.op_type;
      }
      node.id = id;
      node.inputs = clone.inputs;
      node.outputs = clone.outputs;
    }
  }
  for (const Rewire& r : spec.rewires) {
    Node& node = g.nodes[out.new_id[r.node]];
    node.inputs[r.slot] = r.value;
  }
  g.RebuildLinks();

  out.boundary = scan.boundary;
  if (scan.boundary.node != kNone) out.boundary.node = out.new_id[scan.boundary.node];
  return out;
}

Expected<ExecutionOrder> RewrittenExecutionOrder(const RewrittenGraph& rewritten, int32_t forward_nodes) {
  if (IsYieldStyle(rewritten.graph, rewritten.boundary)) {
    return MemoryEfficientOrder(rewritten.graph, rewritten.boundary);
  }
  std::vector<NodeId> order(rewritten.graph.nodes.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<NodeId>(i);
  const size_t num_nodes = order.size();  // read before the move: argument order is unspecified
  return MakeExecutionOrder(num_nodes, std::move(order), forward_nodes - 1);
}

Expected<RewrittenGraph> RewriteGraph(const Graph& graph, const ScanResult& scan, const RewriteSpec& spec) {
  MEMOPT_ASSIGN_OR_RETURN(std::vector<NodeId> base, RewriteBaseOrder(graph, scan));
  std::vector<int32_t> node_order = RewrittenNodeOrder(graph, spec, base);
  RewrittenGraph out = MaterializeRewrite(graph, scan, spec, node_order, /*full=*/true);
  MEMOPT_ASSIGN_OR_RETURN(out.order, RewrittenExecutionOrder(out, scan.order.last_forward + 1));
  return out;
}

}  // namespace memopt
