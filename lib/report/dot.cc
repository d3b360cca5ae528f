#include "report/dot.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

namespace memopt {

namespace {

std::string ShapeText(const Value& v) {
  if (!v.info.is_tensor) return "non-tensor";
  return v.info.shape ? ShapeToString(*v.info.shape) : std::string("[?]");
}

bool Contains(const std::vector<ValueId>& list, ValueId v) { return std::find(list.begin(), list.end(), v) != list.end(); }

}  // namespace

std::string DotQuote(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string RenderCandidateDot(const Graph& graph, const ScanResult& scan, const CandidateSubgraph& c,
                               const DimBindings& dims) {
  const RecomputePlan& plan = scan.plans[c.plan];
  std::string out;
  out += fmt::format("digraph {} {{\n", DotQuote(fmt::format("{}:{} occurrence {}", plan.cluster_id, plan.type(),
                                                              c.occurrence)));
  out += "  rankdir=TB;\n  newrank=true;\n";
  out += "  graph [fontname=\"Helvetica\" fontsize=11 labelloc=t label=" +
         DotQuote(fmt::format("recompute candidate {}:{}:-1, occurrence {} of {}", plan.cluster_id, plan.type(),
                              c.occurrence + 1, c.occurrences)) +
         "];\n";
  out += "  node [fontname=\"Helvetica\" fontsize=10];\n  edge [fontname=\"Helvetica\" fontsize=9 color=\"#555555\"];\n";

  // Ids: n<node id> for nodes, v<value id> for tensor nodes.
  auto node_id = [](NodeId n) { return fmt::format("n{}", n); };
  auto value_id = [](ValueId v) { return fmt::format("v{}", v); };
  auto node_label = [&](NodeId n, const std::string& extra) {
    const Node& node = graph.node(n);
    std::string label = node.name + "\n" + node.op_type;
    if (!extra.empty()) label += "\n" + extra;
    return DotQuote(label);
  };

  // Inputs of the recompute.
  for (ValueId v : c.inputs) {
    const Value& value = graph.value(v);
    const bool weight = value.producer == kNone;
    const std::string origin = value.producer != kNone
                                   ? "from " + graph.node(value.producer).name
                                   : (value.initializer ? std::string("initializer") : std::string("graph input"));
    out += fmt::format("  {} [shape=ellipse style=filled fillcolor={} label={}];\n", value_id(v),
                       weight ? "\"#e6e8eb\"" : "\"#dbe8f7\"",
                       DotQuote(value.name + "\n" + ValueTypeText(value) + "\n" + ValueBytesText(value, dims) + "\n" +
                                origin));
  }

  // The recomputed nodes.
  out += "  subgraph cluster_recompute {\n";
  out += "    label=\"recomputed before the backward consumers (forward nodes)\"; style=filled; "
         "color=\"#fbe3c4\"; fontsize=10;\n";
  for (NodeId n : c.recompute) {
    out += fmt::format("    {} [shape=box style=\"rounded,filled\" fillcolor=\"#ffffff\"{} label={}];\n", node_id(n),
                       n == plan.entry ? " penwidth=2" : "", node_label(n, n == plan.entry ? "(entry)" : ""));
  }
  out += "  }\n";

  // Stashed tensors.
  for (ValueId v : c.stashed) {
    const Value& value = graph.value(v);
    out += fmt::format("  {} [shape=note style=filled fillcolor=\"#f6b26b\" label={}];\n", value_id(v),
                       DotQuote(value.name + "\n" + ValueTypeText(value) + "\n" + ValueBytesText(value, dims) +
                                "\nstashed: freed by the recompute"));
  }

  // Backward consumers.
  out += "  subgraph cluster_backward {\n";
  out += "    label=\"backward consumers\"; style=filled; color=\"#d9ead3\"; fontsize=10;\n";
  for (NodeId n : c.consumers) {
    int others = 0;
    for (ValueId v : graph.node(n).inputs) {
      if (v != kNone && !Contains(c.stashed, v)) ++others;
    }
    const std::string extra =
        fmt::format("step {}{}", scan.order.position[n] + 1,
                    others ? fmt::format(", +{} other input{}", others, others == 1 ? "" : "s") : std::string());
    out += fmt::format("    {} [shape=box style=\"rounded,filled\" fillcolor=\"#ffffff\" label={}];\n", node_id(n),
                       node_label(n, extra));
  }
  out += "  }\n";

  // Edges: inputs -> recompute nodes, inside the recompute, entry -> stashed -> consumers.
  std::set<NodeId> inside(c.recompute.begin(), c.recompute.end());
  for (NodeId n : c.recompute) {
    const Node& node = graph.node(n);
    for (ValueId v : node.inputs) {
      if (v == kNone || graph.value(v).name.empty()) continue;
      const Value& value = graph.value(v);
      if (value.producer != kNone && inside.count(value.producer)) {
        if (Contains(c.stashed, v)) continue;  // drawn through the stashed tensor node
        out += fmt::format("  {} -> {} [label={}];\n", node_id(value.producer), node_id(n),
                           DotQuote(value.name + "\n" + ShapeText(value)));
      } else {
        out += fmt::format("  {} -> {};\n", value_id(v), node_id(n));
      }
    }
  }
  for (ValueId v : c.stashed) {
    out += fmt::format("  {} -> {} [color=\"#e8830c\" penwidth=2];\n", node_id(graph.value(v).producer), value_id(v));
    for (NodeId n : c.consumers) {
      const Node& node = graph.node(n);
      if (std::find(node.inputs.begin(), node.inputs.end(), v) == node.inputs.end()) continue;
      out += fmt::format("  {} -> {} [color=\"#e8830c\" penwidth=2 style=dashed];\n", value_id(v), node_id(n));
    }
  }
  out += "}\n";
  return out;
}

}  // namespace memopt
