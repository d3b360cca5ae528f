#include "report/candidate_subgraph.h"

#include <algorithm>
#include <cstdlib>
#include <set>

#include <fmt/format.h>

#include "util/bytes.h"
#include "util/closest_match.h"

namespace memopt {

namespace {

bool ParseNonNegative(const std::string& text, int* out) {
  if (text.empty() || text.size() > 9) return false;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
  }
  *out = std::atoi(text.c_str());
  return true;
}

std::vector<std::string> Split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    const size_t pos = text.find(sep, start);
    parts.push_back(text.substr(start, pos == std::string::npos ? std::string::npos : pos - start));
    if (pos == std::string::npos) break;
    start = pos + 1;
  }
  return parts;
}

/// Plans of one cluster id and type, in execution order of their entry nodes.
std::vector<size_t> OccurrencesOf(const ScanResult& scan, const std::string& cluster_id, int type) {
  std::vector<size_t> out;
  for (size_t i = 0; i < scan.plans.size(); ++i) {
    if (scan.plans[i].cluster_id == cluster_id && scan.plans[i].type() == type) out.push_back(i);
  }
  std::sort(out.begin(), out.end(), [&](size_t a, size_t b) {
    return scan.order.position[scan.plans[a].entry] < scan.order.position[scan.plans[b].entry];
  });
  return out;
}

std::string NodeText(const Node& node) { return fmt::format("{} ({})", node.name, node.op_type); }

}  // namespace

std::string ValueTypeText(const Value& value) {
  if (!value.info.is_tensor) return "non-tensor";
  return DataTypeName(value.info.dtype) + (value.info.shape ? ShapeToString(*value.info.shape) : std::string("[?]"));
}

std::string ValueBytesText(const Value& value, const DimBindings& dims) {
  std::optional<SymExpr> bytes = value.info.Bytes();
  if (!bytes) return "unknown";
  Expected<int64_t> b = bytes->EvaluateInt(dims);
  if (b.ok()) return HumanBytes(*b);
  return bytes->ToString() + " B";
}

Expected<CandidateSelector> ParseCandidateSelector(const std::string& text) {
  CandidateSelector s;
  s.text = text;
  std::vector<std::string> parts = Split(text, ':');
  std::string head = parts[0];
  const size_t at = head.find('@');
  if (at != std::string::npos) {
    if (!ParseNonNegative(head.substr(at + 1), &s.occurrence)) {
      return UsageError("--show '" + text + "': the occurrence after '@' must be a number (0 is the first)");
    }
    head.resize(at);
  }
  s.cluster_id = head;
  if (s.cluster_id.empty()) return UsageError("--show '" + text + "': empty cluster id; use e.g. --show Gelu+");
  if (parts.size() > 3) return UsageError("--show '" + text + "': expected CLUSTER[@N][:TYPE[:COUNT]]");
  if (parts.size() >= 2) {
    if (!ParseNonNegative(parts[1], &s.type) || s.type < 1 || s.type > 2) {
      return UsageError("--show '" + text + "': type must be 1 (recompute) or 2 (compromised recompute)");
    }
  }
  return s;
}

Expected<size_t> FindCandidatePlan(const ScanResult& scan, const CandidateSelector& selector) {
  std::vector<std::string> ids;
  bool known = false;
  for (const RecomputePlan& p : scan.plans) {
    if (std::find(ids.begin(), ids.end(), p.cluster_id) == ids.end()) ids.push_back(p.cluster_id);
    known = known || p.cluster_id == selector.cluster_id;
  }
  if (!known) {
    std::string message = "--show: no recompute candidate '" + selector.cluster_id + "' in this graph";
    if (ids.empty()) return UsageError(message + " (the scan found no candidates)");
    std::sort(ids.begin(), ids.end());
    const std::string guess = ClosestMatch(selector.cluster_id, ids);
    if (!guess.empty()) message += "; did you mean '" + guess + "'?";
    message += " (candidates:";
    for (size_t i = 0; i < ids.size(); ++i) message += (i ? ", " : " ") + ids[i];
    return UsageError(message + ")");
  }
  int type = selector.type;
  if (type == 0) type = OccurrencesOf(scan, selector.cluster_id, 1).empty() ? 2 : 1;
  std::vector<size_t> occ = OccurrencesOf(scan, selector.cluster_id, type);
  if (occ.empty()) {
    return UsageError(fmt::format("--show '{}': '{}' has no type-{} plan (try :{})", selector.text,
                                  selector.cluster_id, type, type == 1 ? 2 : 1));
  }
  if (selector.occurrence >= static_cast<int>(occ.size())) {
    return UsageError(fmt::format("--show '{}': '{}' occurs {} time{} (use @0 to @{})", selector.text,
                                  selector.cluster_id, occ.size(), occ.size() == 1 ? "" : "s", occ.size() - 1));
  }
  return occ[selector.occurrence];
}

CandidateSubgraph BuildCandidateSubgraph(const Graph& graph, const ScanResult& scan, size_t plan_index) {
  const RecomputePlan& plan = scan.plans[plan_index];
  CandidateSubgraph c;
  c.plan = plan_index;
  const std::vector<size_t> occ = OccurrencesOf(scan, plan.cluster_id, plan.type());
  c.occurrences = static_cast<int>(occ.size());
  c.occurrence = static_cast<int>(std::find(occ.begin(), occ.end(), plan_index) - occ.begin());
  c.recompute = plan.subgraph;

  std::set<NodeId> inside(c.recompute.begin(), c.recompute.end());
  std::set<ValueId> seen;
  for (NodeId n : c.recompute) {
    for (ValueId v : graph.node(n).inputs) {
      if (v == kNone || graph.value(v).name.empty()) continue;
      const NodeId producer = graph.value(v).producer;
      if (producer != kNone && inside.count(producer)) continue;
      if (seen.insert(v).second) c.inputs.push_back(v);
    }
  }
  for (const StashedOutput& so : plan.outputs) c.stashed.push_back(so.value);

  std::set<NodeId> consumers;
  for (ValueId v : c.stashed) {
    for (const auto& [node, slot] : graph.value(v).consumers) {
      if (scan.order.IsBackward(node)) consumers.insert(node);
    }
  }
  c.consumers.assign(consumers.begin(), consumers.end());
  std::sort(c.consumers.begin(), c.consumers.end(),
            [&](NodeId a, NodeId b) { return scan.order.position[a] < scan.order.position[b]; });

  std::set<ValueId> known(seen);
  for (NodeId n : c.recompute) {
    for (ValueId v : graph.node(n).outputs) {
      if (v != kNone) known.insert(v);
    }
  }
  for (NodeId n : c.consumers) {
    for (ValueId v : graph.node(n).inputs) {
      if (v == kNone || graph.value(v).name.empty() || known.count(v)) continue;
      known.insert(v);
      c.consumer_inputs.push_back(v);
    }
  }
  return c;
}

std::string RenderCandidateText(const Graph& graph, const ScanResult& scan, const CandidateSubgraph& c,
                                const DimBindings& dims) {
  const RecomputePlan& plan = scan.plans[c.plan];
  const Node& entry = graph.node(plan.entry);
  std::string out;
  out += fmt::format("Candidate {}:{}:-1, occurrence {} of {} (select with --show {}@{})\n", plan.cluster_id,
                     plan.type(), c.occurrence + 1, c.occurrences, plan.cluster_id, c.occurrence);
  out += fmt::format("  entry {}, forward step {} of {}\n", NodeText(entry), scan.order.position[plan.entry] + 1,
                     scan.order.order.size());
  if (plan.compromise) {
    out += fmt::format("  compromised recompute: keeps the narrower input, saves {:.0f}% of the output\n",
                       plan.save_ratio.ToDouble() * 100.0);
  }
  out += fmt::format("\nStashed tensors freed between forward and backward ({}):\n", c.stashed.size());
  for (ValueId v : c.stashed) {
    const Value& value = graph.value(v);
    out += fmt::format("  {}  {}  {}\n", value.name, ValueTypeText(value), ValueBytesText(value, dims));
  }
  out += fmt::format("\nRecomputed in the backward pass ({} node{}, in order):\n", c.recompute.size(),
                     c.recompute.size() == 1 ? "" : "s");
  for (NodeId n : c.recompute) {
    const Node& node = graph.node(n);
    std::string reads;
    for (ValueId v : node.inputs) {
      if (v == kNone) continue;
      reads += (reads.empty() ? "" : ", ") + graph.value(v).name;
    }
    out += fmt::format("  {}  reads {}\n", NodeText(node), reads.empty() ? "nothing" : reads);
  }
  out += fmt::format("\nInputs the recompute reads (kept live until it runs) ({}):\n", c.inputs.size());
  for (ValueId v : c.inputs) {
    const Value& value = graph.value(v);
    std::string from = value.producer != kNone          ? "from " + NodeText(graph.node(value.producer))
                       : value.initializer.has_value() ? std::string("initializer")
                                                       : std::string("graph input");
    out += fmt::format("  {}  {}  {}  {}\n", value.name, ValueTypeText(value), ValueBytesText(value, dims), from);
  }
  out += fmt::format("\nBackward consumers of the stashed tensors ({}):\n", c.consumers.size());
  for (NodeId n : c.consumers) {
    const Node& node = graph.node(n);
    std::string reads;
    for (ValueId v : node.inputs) {
      if (v != kNone && std::find(c.stashed.begin(), c.stashed.end(), v) != c.stashed.end()) {
        reads += (reads.empty() ? "" : ", ") + graph.value(v).name;
      }
    }
    out += fmt::format("  {}  step {}, reads {}\n", NodeText(node), scan.order.position[n] + 1, reads);
  }
  return out;
}

}  // namespace memopt
