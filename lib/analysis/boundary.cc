#include "analysis/boundary.h"

#include <deque>
#include <string>

#include <fmt/format.h>

#include "analysis/exec_order.h"
#include "analysis/scan.h"
#include "sym/sym_expr.h"
#include "util/closest_match.h"

namespace memopt {
namespace {

Expected<Boundary> OverrideBoundary(const Graph& graph, const std::string& name) {
  for (const Node& node : graph.nodes) {
    if (node.name == name) {
      Boundary b;
      b.kind = Boundary::Kind::kOverride;
      b.node = node.id;
      b.explanation = fmt::format("--boundary node {}", node.Describe());
      return b;
    }
  }
  std::vector<std::string> names;
  names.reserve(graph.nodes.size());
  for (const Node& node : graph.nodes) {
    if (!node.name.empty()) names.push_back(node.name);
  }
  std::string msg = fmt::format("boundary node '{}' not found in the graph", name);
  std::string hint = ClosestMatch(name, names);
  if (!hint.empty()) {
    msg += fmt::format("; did you mean '{}'?", hint);
  } else {
    msg += "; pass the name of a node (NodeProto.name)";
  }
  return UsageError(msg);
}

}  // namespace

bool IsGradientNode(const Node& node) {
  return node.op_type.find("Grad") != std::string::npos || node.name.find("_Grad/") != std::string::npos;
}

std::vector<char> LossRuleBackwardMask(const Graph& graph) {
  std::vector<char> backward(graph.nodes.size(), 0);
  std::deque<NodeId> queue;
  for (const Node& node : graph.nodes) {
    if (IsGradientNode(node)) {
      backward[node.id] = 1;
      queue.push_back(node.id);
    }
  }
  while (!queue.empty()) {
    NodeId n = queue.front();
    queue.pop_front();
    for (ValueId v : graph.nodes[n].outputs) {
      if (v == kNone) continue;
      for (const auto& [consumer, slot] : graph.values[v].consumers) {
        if (!backward[consumer]) {
          backward[consumer] = 1;
          queue.push_back(consumer);
        }
      }
    }
  }
  return backward;
}

Expected<Boundary> FindBoundary(const Graph& graph, const ScanOptions& options) {
  if (!options.boundary_node.empty()) return OverrideBoundary(graph, options.boundary_node);

  NodeId yield = kNone;
  for (const Node& node : graph.nodes) {
    if (node.op_type != "YieldOp") continue;
    if (yield != kNone) {
      return InvalidInput(fmt::format(
          "there are multiple YieldOps in the graph, node: {} is the second one; pass --boundary NODE to choose "
          "the forward/backward boundary",
          node.name));
    }
    yield = node.id;
  }
  if (yield != kNone) {
    Boundary b;
    b.kind = Boundary::Kind::kYieldOp;
    b.node = yield;
    b.explanation = fmt::format("YieldOp '{}'", graph.nodes[yield].name);
    return b;
  }

  // The loss rule.
  std::vector<char> backward = LossRuleBackwardMask(graph);
  int gradient_nodes = 0;
  for (const Node& node : graph.nodes) gradient_nodes += IsGradientNode(node) ? 1 : 0;
  Boundary b;
  if (gradient_nodes == 0) {
    b.kind = Boundary::Kind::kNone;
    b.explanation = "no YieldOp and no gradient nodes: forward-only graph";
    return b;
  }
  MEMOPT_ASSIGN_OR_RETURN(std::vector<NodeId> topo, TopologicalOrder(graph));
  NodeId loss = kNone;
  NodeId last_forward = kNone;
  for (NodeId n : topo) {
    if (backward[n]) continue;
    last_forward = n;
    const Node& node = graph.nodes[n];
    if (node.op_type.find("Loss") == std::string::npos) continue;
    for (ValueId v : node.outputs) {
      if (v != kNone && graph.values[v].is_graph_output) {
        loss = n;
        break;
      }
    }
  }
  b.kind = Boundary::Kind::kLoss;
  b.node = loss != kNone ? loss : last_forward;
  int backward_nodes = 0;
  for (char c : backward) backward_nodes += c ? 1 : 0;
  if (b.node == kNone) {
    b.explanation = fmt::format("no YieldOp; all {} nodes are gradient nodes or follow one: no forward pass",
                                backward_nodes);
  } else {
    b.explanation = fmt::format("no YieldOp; {} node {} ({} gradient nodes found)",
                                loss != kNone ? "loss" : "last forward", graph.nodes[b.node].Describe(),
                                gradient_nodes);
  }
  return b;
}

}  // namespace memopt
