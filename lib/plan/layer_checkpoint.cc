#include "plan/layer_checkpoint.h"

#include <algorithm>
#include <set>
#include <string>

#include "analysis/layer_boundary.h"
#include "analysis/stashed.h"
#include "rewrite/rewrite_spec.h"

namespace memopt {

namespace {

bool IsNumber(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

/// The module path of a node: what the exporter's metadata says (Node::module), else the path of a
/// TorchScript-style name ("/model/layers.0/attn/MatMul" -> "model.layers.0.attn"); "" for none.
std::string ModulePath(const Node& node) {
  if (!node.module.empty()) return node.module;
  const std::string& name = node.name;
  if (name.size() < 2 || name[0] != '/') return "";
  const size_t last = name.rfind('/');
  if (last == 0) return "";
  std::string path = name.substr(1, last - 1);
  std::replace(path.begin(), path.end(), '/', '.');
  return path;
}

std::vector<std::string> Split(const std::string& path) {
  std::vector<std::string> parts;
  size_t begin = 0;
  while (begin <= path.size()) {
    const size_t end = path.find('.', begin);
    parts.push_back(path.substr(begin, end == std::string::npos ? std::string::npos : end - begin));
    if (end == std::string::npos) break;
    begin = end + 1;
  }
  return parts;
}

}  // namespace

CheckpointBlocks FindCheckpointBlocks(const Graph& graph, const ScanResult& scan) {
  const ExecutionOrder& order = scan.order;
  const int32_t forward_end = order.last_forward + 1;
  CheckpointBlocks blocks;
  blocks.key.assign(graph.nodes.size(), "");
  // Module paths: blocks end right after the first numbered component (a ModuleList or Sequential
  // entry: "layers.3", "h.0", "layer1.2"); without any, each top-level module is a block.
  std::vector<std::vector<std::string>> parts(graph.nodes.size());
  bool numbered = false;
  for (int32_t pos = 0; pos < forward_end; ++pos) {
    const NodeId n = order.order[static_cast<size_t>(pos)];
    const std::string path = ModulePath(graph.nodes[n]);
    if (path.empty()) continue;
    parts[n] = Split(path);
    for (const std::string& part : parts[n]) numbered = numbered || IsNumber(part);
  }
  std::set<std::string> keys;
  for (int32_t pos = 0; pos < forward_end; ++pos) {
    const NodeId n = order.order[static_cast<size_t>(pos)];
    if (parts[n].empty()) continue;
    std::string key;
    size_t depth = numbered ? parts[n].size() : 1;
    for (size_t i = 0; i < parts[n].size(); ++i) {
      if (numbered && IsNumber(parts[n][i])) {
        depth = i + 1;
        break;
      }
    }
    for (size_t i = 0; i < depth; ++i) key += (i ? "." : "") + parts[n][i];
    blocks.key[n] = key;
    keys.insert(key);
  }
  if (keys.size() >= 2) {
    blocks.source = "modules";
    return blocks;
  }
  // Transformer layers: the spans between consecutive layer-boundary LayerNorms, the last one as
  // long as the one before it (or to the end of the forward pass when there is only one).
  blocks.key.assign(graph.nodes.size(), "");
  std::vector<NodeId> boundaries = FindLayerBoundaryLayerNormNodes(graph, order, scan.boundary);
  if (boundaries.empty()) return blocks;
  std::vector<int32_t> start;
  for (NodeId b : boundaries) start.push_back(order.position[b]);
  std::sort(start.begin(), start.end());
  const int32_t last_len = start.size() >= 2 ? start.back() - start[start.size() - 2] : forward_end - start.back();
  start.push_back(std::min(forward_end, start.back() + last_len));
  for (size_t layer = 0; layer + 1 < start.size(); ++layer) {
    for (int32_t pos = start[layer]; pos < start[layer + 1]; ++pos) {
      blocks.key[order.order[static_cast<size_t>(pos)]] = "layer " + std::to_string(layer);
    }
  }
  blocks.source = "layer boundaries";
  return blocks;
}

ScanResult LayerCheckpointScan(const Graph& graph, const ScanResult& scan) {
  ScanResult out = scan;
  out.plans.clear();
  out.groups.clear();
  out.rejected.clear();
  const ExecutionOrder& order = scan.order;
  const CheckpointBlocks blocks = FindCheckpointBlocks(graph, scan);
  if (blocks.source.empty()) return out;
  const StashedCandidates stashed = FindStashedCandidates(graph, order);
  std::vector<RecomputePlan> plans;
  std::vector<char> seen(graph.nodes.size(), 0);
  std::vector<NodeId> stack, members;
  for (NodeId entry : stashed.nodes) {
    const std::string& key = blocks.key[entry];
    if (key.empty() || !order.IsForward(entry)) continue;
    auto inside = [&](NodeId n) { return order.IsForward(n) && blocks.key[n] == key; };
    // The block's output (read by forward nodes outside the block) is the next block's input: kept.
    bool output_of_block = false;
    for (ValueId v : graph.nodes[entry].outputs) {
      if (v == kNone) continue;
      for (const auto& [c, slot] : graph.values[v].consumers) {
        output_of_block = output_of_block || (order.IsForward(c) && !inside(c));
      }
    }
    if (output_of_block) continue;
    // Ancestors inside the block.
    members.clear();
    stack.assign(1, entry);
    seen[entry] = 1;
    while (!stack.empty()) {
      const NodeId n = stack.back();
      stack.pop_back();
      members.push_back(n);
      for (ValueId v : graph.nodes[n].inputs) {
        if (v == kNone) continue;
        const NodeId p = graph.values[v].producer;
        if (p == kNone || seen[p] || !inside(p)) continue;
        seen[p] = 1;
        stack.push_back(p);
      }
    }
    for (NodeId n : members) seen[n] = 0;
    // A clone of an unseeded random op would draw other numbers: no checkpoint through it.
    if (!std::all_of(members.begin(), members.end(), [&](NodeId n) { return RecomputesIdentically(graph.nodes[n]); })) {
      continue;
    }
    std::sort(members.begin(), members.end(),
              [&](NodeId a, NodeId b) { return order.position[a] < order.position[b]; });
    RecomputePlan plan;
    plan.entry = entry;
    plan.subgraph = members;
    plan.cluster_id = "checkpoint(" + key + ")";
    for (int32_t i : stashed.outputs[entry]) {
      StashedOutput o;
      o.output_index = i;
      o.value = graph.nodes[entry].outputs[static_cast<size_t>(i)];
      o.bytes = graph.values[o.value].info.Bytes();
      plan.outputs.push_back(std::move(o));
    }
    plans.push_back(std::move(plan));
  }
  // ScanResult::plans order: reverse execution order of the entries.
  std::sort(plans.begin(), plans.end(), [&](const RecomputePlan& a, const RecomputePlan& b) {
    return order.position[a.entry] > order.position[b.entry];
  });
  out.plans = std::move(plans);
  return out;
}

bool IsCheckpointCluster(std::string_view cluster_id) { return cluster_id.rfind("checkpoint(", 0) == 0; }

ScanResult WithCheckpointPlans(const Graph& graph, const ScanResult& scan) {
  ScanResult checkpoints = LayerCheckpointScan(graph, scan);
  if (checkpoints.plans.empty()) return scan;
  ScanResult out = scan;
  std::vector<RecomputePlan> merged;
  merged.reserve(scan.plans.size() + checkpoints.plans.size());
  const ExecutionOrder& order = scan.order;
  size_t i = 0;
  for (RecomputePlan& c : checkpoints.plans) {
    // Both lists are in reverse execution order of their entries: merge, a node's own plans first.
    while (i < scan.plans.size() && order.position[scan.plans[i].entry] >= order.position[c.entry]) {
      merged.push_back(scan.plans[i++]);
    }
    bool same = false;
    for (size_t k = merged.size(); k-- > 0 && merged[k].entry == c.entry;) {
      same = same || (merged[k].type() == 1 && merged[k].subgraph == c.subgraph);
    }
    if (!same) merged.push_back(std::move(c));
  }
  while (i < scan.plans.size()) merged.push_back(scan.plans[i++]);
  out.plans = std::move(merged);
  return out;
}

}  // namespace memopt
