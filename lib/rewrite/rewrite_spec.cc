#include "rewrite/rewrite_spec.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

namespace memopt {
namespace {

constexpr const char* kSuffix = "_recompute";

ValueId FirstOutput(const Node& node) {
  for (ValueId v : node.outputs) {
    if (v != kNone) return v;
  }
  return kNone;
}

}  // namespace

bool NeedsDropoutSeed(const Node& node) {
  if (node.HasAttr("seed")) return false;
  if (node.domain.empty()) {
    return node.op_type == "Dropout" && (node.since_version == 12 || node.since_version == 13);
  }
  if (node.domain != "com.microsoft") return false;
  return node.op_type == "BitmaskDropout" || node.op_type == "BiasDropout" || node.op_type == "BitmaskBiasDropout" ||
         node.op_type == "BiasSoftmaxDropout";
}

int64_t DropoutSeedFor(const std::string& output_name) {
  uint32_t h = 0;
  for (char c : output_name) h = h * 101u + static_cast<unsigned char>(c);
  return static_cast<int64_t>(h);
}

RewriteSpecBuilder::RewriteSpecBuilder(const Graph& graph, const ScanResult& scan)
    : graph_(graph), scan_(scan), backward_(graph.nodes.size(), 0), needs_seed_(graph.nodes.size(), 0),
      plan_error_(scan.plans.size()) {
  for (const Node& node : graph.nodes) {
    const int32_t pos = scan.order.position[node.id];
    backward_[node.id] = pos > scan.order.last_forward;
    needs_seed_[node.id] = NeedsDropoutSeed(node);
  }
  for (size_t p = 0; p < scan.plans.size(); ++p) {
    for (NodeId n : scan.plans[p].subgraph) {
      const Node& node = graph.nodes[n];
      if (node.op_type == "PythonOp") {
        plan_error_[p] = fmt::format("node {} is a PythonOp: memopt apply does not implement ORT's RNG-state "
                                     "rewiring of recomputed PythonOps",
                                     node.Describe());
        break;
      }
      if (FirstOutput(node) == kNone) {
        plan_error_[p] = fmt::format("node {} has no named output to name its clone after", node.Describe());
        break;
      }
      auto clash = [&](ValueId v) {
        return v != kNone && graph.FindValue(graph.values[v].name + kSuffix) != kNone;
      };
      for (ValueId v : node.outputs) {
        if (clash(v)) {
          plan_error_[p] = fmt::format("the graph already has a tensor named '{}{}' (was it rewritten before?); "
                                       "node {} cannot be cloned under that name",
                                       graph.values[v].name, kSuffix, node.Describe());
          break;
        }
      }
      if (!plan_error_[p].empty()) break;
      for (ValueId v : node.inputs) {
        if (clash(v)) {
          plan_error_[p] = fmt::format("the graph already has a tensor named '{}{}' (was it rewritten before?); "
                                       "a clone of node {} would read it",
                                       graph.values[v].name, kSuffix, node.Describe());
          break;
        }
      }
      if (!plan_error_[p].empty()) break;
    }
  }
}

Expected<RewriteSpec> RewriteSpecBuilder::Build(const std::vector<size_t>& plans) const {
  std::vector<size_t> order = plans;
  std::sort(order.begin(), order.end());
  order.erase(std::unique(order.begin(), order.end()), order.end());
  // One plan per node: a node with a type-1 and a type-2 plan gets the first one selected (its
  // plans are adjacent, type 1 first), as ORT finalizes the first matching plan of a node.
  std::unordered_set<NodeId> entries;
  order.erase(std::remove_if(order.begin(), order.end(),
                             [&](size_t p) { return p < scan_.plans.size() && !entries.insert(scan_.plans[p].entry).second; }),
              order.end());

  // Maps keyed by the values and nodes the plans touch: a spec costs the size of its plans, not of
  // the graph (the budget planner builds one per candidate).
  const size_t num_values = graph_.values.size();
  RewriteSpec spec;
  spec.num_original_values = num_values;
  std::unordered_map<NodeId, int32_t> clone_of_node;
  std::unordered_map<ValueId, ValueId> recompute_of;
  auto recompute = [&recompute_of](ValueId v) {
    auto it = recompute_of.find(v);
    return it == recompute_of.end() ? kNone : it->second;
  };
  // Clones that read an original value (clone index, input slot), to rewire when its producer's
  // plan is applied later.
  std::unordered_map<ValueId, std::vector<std::pair<int32_t, int32_t>>> clone_readers;

  for (size_t p : order) {
    if (p >= scan_.plans.size()) return InternalError(fmt::format("plan index {} out of range", p));
    const RecomputePlan& plan = scan_.plans[p];
    if (!plan_error_[p].empty()) {
      return Unsupported(fmt::format("plan \"{}:{}\" of node {}: {}", plan.cluster_id, plan.type(),
                                     graph_.nodes[plan.entry].Describe(), plan_error_[p]));
    }
    spec.applied_plans.push_back(p);
    for (NodeId n : plan.subgraph) {
      const Node& node = graph_.nodes[n];
      if (recompute(FirstOutput(node)) != kNone) continue;  // cloned by an earlier plan: reuse
      if (needs_seed_[n]) spec.seeded_dropouts.push_back(n);
      const int32_t k = static_cast<int32_t>(spec.clones.size());
      CloneSpec clone;
      clone.original = n;
      clone.inputs.reserve(node.inputs.size());
      for (size_t slot = 0; slot < node.inputs.size(); ++slot) {
        const ValueId x = node.inputs[slot];
        if (x == kNone) {
          clone.inputs.push_back(kNone);
        } else if (const ValueId r = recompute(x); r != kNone) {
          clone.inputs.push_back(r);
        } else {
          clone.inputs.push_back(x);
          clone_readers[x].emplace_back(k, static_cast<int32_t>(slot));
        }
      }
      clone.outputs.reserve(node.outputs.size());
      for (ValueId o : node.outputs) {
        if (o == kNone) {
          clone.outputs.push_back(kNone);
          continue;
        }
        const ValueId ext = static_cast<ValueId>(num_values + spec.clone_values.size());
        spec.clone_values.push_back(o);
        recompute_of[o] = ext;
        clone.outputs.push_back(ext);
      }
      clone_of_node[n] = k;
      spec.clones.push_back(std::move(clone));
    }

    // Rewire the entry's backward consumers (and clones reading it) to the entry's clone.
    const Node& entry = graph_.nodes[plan.entry];
    auto cloned = clone_of_node.find(plan.entry);
    if (cloned == clone_of_node.end()) return InternalError("entry node " + entry.Describe() + " was not cloned");
    const int32_t replacement = cloned->second;
    for (size_t i = 0; i < entry.outputs.size(); ++i) {
      const ValueId o = entry.outputs[i];
      if (o == kNone) continue;
      const ValueId r = spec.clones[replacement].outputs[i];
      for (const auto& [consumer, slot] : graph_.values[o].consumers) {
        if (backward_[consumer]) spec.rewires.push_back({consumer, slot, r});
      }
      auto readers = clone_readers.find(o);
      if (readers == clone_readers.end()) continue;
      for (const auto& [k, slot] : readers->second) spec.clones[k].inputs[slot] = r;
      clone_readers.erase(readers);
    }
  }
  std::sort(spec.seeded_dropouts.begin(), spec.seeded_dropouts.end());
  return spec;
}

ClonePlacement PlaceClones(const RewriteSpec& spec, const std::vector<int32_t>& base_position, int32_t num_positions) {
  const size_t num_clones = spec.clones.size();
  std::vector<int32_t> producer(spec.clone_values.size(), -1);  // clone value -> clone index
  for (size_t k = 0; k < num_clones; ++k) {
    for (ValueId v : spec.clones[k].outputs) {
      if (v != kNone) producer[v - spec.num_original_values] = static_cast<int32_t>(k);
    }
  }
  // Rewired inputs in base order, then slot order.
  std::vector<Rewire> rewires = spec.rewires;
  std::sort(rewires.begin(), rewires.end(), [&](const Rewire& a, const Rewire& b) {
    return std::pair(base_position[a.node], a.slot) < std::pair(base_position[b.node], b.slot);
  });

  ClonePlacement out;
  out.before.assign(num_clones, num_positions);
  out.sequence.reserve(num_clones);
  std::vector<char> emitted(num_clones, 0);
  std::vector<std::pair<int32_t, size_t>> stack;  // (clone, next input to look at)
  auto emit = [&](int32_t start, int32_t before) {
    if (emitted[start]) return;
    emitted[start] = 1;
    stack.emplace_back(start, 0);
    while (!stack.empty()) {
      auto& [k, next] = stack.back();
      const std::vector<ValueId>& inputs = spec.clones[k].inputs;
      bool pushed = false;
      while (next < inputs.size()) {
        const ValueId v = inputs[next++];
        if (v == kNone || !spec.IsCloneValue(v)) continue;
        const int32_t p = producer[v - spec.num_original_values];
        if (p < 0 || emitted[p]) continue;
        emitted[p] = 1;
        stack.emplace_back(p, 0);
        pushed = true;
        break;
      }
      if (pushed) continue;
      out.before[k] = before;
      out.sequence.push_back(k);
      stack.pop_back();
    }
  };
  for (const Rewire& r : rewires) {
    if (base_position[r.node] >= 0) emit(producer[r.value - spec.num_original_values], base_position[r.node]);
  }
  for (size_t k = 0; k < num_clones; ++k) emit(static_cast<int32_t>(k), num_positions);
  return out;
}

std::vector<int32_t> RewrittenNodeOrder(const Graph& graph, const RewriteSpec& spec, const std::vector<NodeId>& base) {
  std::vector<int32_t> position(graph.nodes.size(), -1);
  for (size_t i = 0; i < base.size(); ++i) position[base[i]] = static_cast<int32_t>(i);
  const ClonePlacement placement = PlaceClones(spec, position, static_cast<int32_t>(base.size()));
  std::vector<int32_t> out;
  out.reserve(base.size() + spec.clones.size());
  size_t next = 0;  // into placement.sequence
  for (size_t i = 0; i <= base.size(); ++i) {
    while (next < placement.sequence.size() && placement.before[placement.sequence[next]] == static_cast<int32_t>(i)) {
      out.push_back(-(placement.sequence[next++] + 1));
    }
    if (i < base.size()) out.push_back(base[i]);
  }
  return out;
}

}  // namespace memopt
