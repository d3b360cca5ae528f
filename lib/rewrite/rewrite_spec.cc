#include "rewrite/rewrite_spec.h"

#include <algorithm>
#include <limits>
#include <map>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "ir/op_registry.h"

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

bool RecomputesIdentically(const Node& node) {
  if (node.HasAttr("seed") || NeedsDropoutSeed(node)) return true;
  const OpDef* def = Ops().Find(node.domain, node.op_type, [](const OpDef& d) { return d.cpu.fn != nullptr; });
  if (def != nullptr) return def->cpu.is_random == nullptr;
  // No CPU kernel: by name, as the ops that draw numbers are named.
  return node.op_type.find("Random") == std::string::npos && node.op_type != "Bernoulli" &&
         node.op_type != "Multinomial" && node.op_type.find("Dropout") == std::string::npos;
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
  readers_.resize(scan.plans.size());
  split_begin_.resize(scan.plans.size());
  for (size_t p = 0; p < scan.plans.size(); ++p) {
    std::vector<NodeId>& readers = readers_[p];
    for (ValueId o : graph.nodes[scan.plans[p].entry].outputs) {
      if (o == kNone) continue;
      for (const auto& [consumer, slot] : graph.values[o].consumers) {
        if (backward_[consumer]) readers.push_back(consumer);
      }
    }
    std::sort(readers.begin(), readers.end(), [&](NodeId a, NodeId b) {
      return scan.order.position[a] != scan.order.position[b] ? scan.order.position[a] < scan.order.position[b] : a < b;
    });
    readers.erase(std::unique(readers.begin(), readers.end()), readers.end());
    split_begin_[p] = split_plan_.size();
    for (size_t j = 1; j < readers.size(); ++j) split_plan_.push_back(p);
  }
  keep_begin_ = scan.plans.size() + split_plan_.size();
  keep_first_.resize(scan.plans.size());
  for (size_t p = 0; p < scan.plans.size(); ++p) {
    keep_first_[p] = keep_plan_.size();
    keep_plan_.insert(keep_plan_.end(), readers_[p].size(), p);
  }
  private_begin_ = keep_begin_ + keep_plan_.size();
  private_of_.assign(scan.plans.size(), -1);
  for (size_t p = 0; p < scan.plans.size(); ++p) {
    if (readers_[p].empty()) continue;
    private_of_[p] = static_cast<int64_t>(private_begin_ + private_plan_.size());
    private_plan_.push_back(p);
  }
}

int64_t RewriteSpecBuilder::KeepIndex(size_t plan, int32_t reader) const {
  if (plan >= scan_.plans.size() || reader < 0 || static_cast<size_t>(reader) >= readers_[plan].size()) return -1;
  return static_cast<int64_t>(keep_begin_ + keep_first_[plan] + static_cast<size_t>(reader));
}

std::unordered_map<size_t, int32_t> RewriteSpecBuilder::KeepReaders(const std::vector<size_t>& plans) const {
  std::unordered_map<size_t, int32_t> keep_of;
  for (size_t p : plans) {
    if (!IsKeep(p)) continue;
    auto [it, added] = keep_of.emplace(BasePlan(p), SplitReader(p));
    if (!added) it->second = std::max(it->second, SplitReader(p));
  }
  return keep_of;
}

std::vector<size_t> RewriteSpecBuilder::Canonical(const std::vector<size_t>& plans) const {
  const std::unordered_map<size_t, int32_t> keep_of = KeepReaders(plans);
  std::vector<size_t> out;
  for (size_t p : plans) {
    if (p >= num_indices()) continue;
    if (IsVariant(p)) out.push_back(BasePlan(p));
    auto kept = keep_of.find(BasePlan(p));
    if (kept != keep_of.end() && ((IsKeep(p) && SplitReader(p) < kept->second) ||
                                  (IsSplit(p) && SplitReader(p) <= kept->second))) {
      continue;
    }
    out.push_back(p);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

int64_t RewriteSpecBuilder::PrivateIndex(size_t plan) const {
  return plan < scan_.plans.size() ? private_of_[plan] : -1;
}

int64_t RewriteSpecBuilder::SplitIndex(size_t plan, int32_t reader) const {
  if (plan >= scan_.plans.size() || reader < 1 || static_cast<size_t>(reader) >= readers_[plan].size()) return -1;
  return static_cast<int64_t>(scan_.plans.size() + split_begin_[plan] + static_cast<size_t>(reader) - 1);
}

std::string RecomputeName(const std::string& name, int32_t copy) {
  return copy == 0 ? name + kSuffix : name + kSuffix + "_" + std::to_string(copy + 1);
}

Expected<RewriteSpec> RewriteSpecBuilder::Build(const std::vector<size_t>& plans) const {
  // Scan plans and, per plan, the readers its splits start groups at.
  std::vector<size_t> order;
  order.reserve(plans.size());
  std::unordered_map<size_t, std::vector<int32_t>> starts_of;
  std::unordered_set<size_t> is_private;
  for (size_t p : plans) {
    if (p >= num_indices()) return InternalError(fmt::format("plan index {} out of range", p));
    const size_t base = BasePlan(p);
    order.push_back(base);
    if (IsSplit(p)) starts_of[base].push_back(SplitReader(p));
    if (IsPrivate(p)) is_private.insert(base);
  }
  const std::unordered_map<size_t, int32_t> keep_of = KeepReaders(plans);  // where clone groups start
  std::sort(order.begin(), order.end());
  order.erase(std::unique(order.begin(), order.end()), order.end());
  // One plan per node: a node with a type-1 and a type-2 plan gets the first one selected (its
  // plans are adjacent, type 1 first), as ORT finalizes the first matching plan of a node.
  std::unordered_set<NodeId> entries;
  order.erase(std::remove_if(order.begin(), order.end(), [&](size_t p) { return !entries.insert(scan_.plans[p].entry).second; }),
              order.end());

  // Maps keyed by the values and nodes the plans touch: a spec costs the size of its plans, not of
  // the graph (the budget planner builds one per candidate).
  const size_t num_values = graph_.values.size();
  const std::vector<int32_t>& position = scan_.order.position;
  RewriteSpec spec;
  spec.num_original_values = num_values;
  std::unordered_map<NodeId, int32_t> clone_of_node;  // ORT's clone (copy 0)
  std::unordered_map<NodeId, int32_t> copies;         // further copies made of each node so far
  std::unordered_map<ValueId, ValueId> recompute_of;  // original value -> ORT's clone of it
  auto recompute = [&recompute_of](ValueId v) {
    auto it = recompute_of.find(v);
    return it == recompute_of.end() ? kNone : it->second;
  };
  // Per clone: the base position of its group's first reader (where it runs, at the latest), and
  // the private group it belongs to (-1: none; private(p) gives each clone group of p one).
  std::vector<int32_t> anchor;
  std::vector<int32_t> private_group;
  int32_t num_private_groups = 0;
  // Per (private group, scan plan): the group's own copy of the plan's entry outputs.
  std::map<std::pair<int32_t, size_t>, std::unordered_map<ValueId, ValueId>> private_copy;
  // Clones that read an original value (clone index, input slot), to rewire when its producer's
  // plan is applied later.
  std::unordered_map<ValueId, std::vector<std::pair<int32_t, int32_t>>> clone_readers;

  // Clones `node` reading `input(slot, x)` for each input; returns the clone index.
  auto add_clone = [&](NodeId n, int32_t copy, int32_t at, auto&& input) -> Expected<int32_t> {
    const Node& node = graph_.nodes[n];
    const int32_t k = static_cast<int32_t>(spec.clones.size());
    CloneSpec clone;
    clone.original = n;
    clone.copy = copy;
    clone.inputs.reserve(node.inputs.size());
    for (size_t slot = 0; slot < node.inputs.size(); ++slot) {
      const ValueId x = node.inputs[slot];
      const ValueId in = x == kNone ? kNone : input(x);
      clone.inputs.push_back(in);
      if (in == x && x != kNone) clone_readers[x].emplace_back(k, static_cast<int32_t>(slot));
    }
    clone.outputs.reserve(node.outputs.size());
    for (ValueId o : node.outputs) {
      if (o == kNone) {
        clone.outputs.push_back(kNone);
        continue;
      }
      if (copy > 0 && graph_.FindValue(RecomputeName(graph_.values[o].name, copy)) != kNone) {
        return Unsupported(fmt::format("the graph already has a tensor named '{}' (was it rewritten before?); node {} "
                                       "cannot be copied under that name",
                                       RecomputeName(graph_.values[o].name, copy), node.Describe()));
      }
      clone.outputs.push_back(static_cast<ValueId>(num_values + spec.clone_values.size()));
      spec.clone_values.push_back(o);
    }
    spec.clones.push_back(std::move(clone));
    anchor.push_back(at);
    private_group.push_back(-1);
    return k;
  };
  // A further copy of a plan's whole subgraph (a split's later group, or a private group's copy
  // of a plan it reads), anchored at `at`, in private group `group` (-1: none): its own values
  // inside, ORT's clones (when made already) or the original values outside.
  struct Copy {
    std::unordered_map<ValueId, ValueId> own;  // original value -> this copy's
    int32_t entry_clone = -1;                  // the clone of the plan's entry
  };
  auto add_copy = [&](const RecomputePlan& plan, int32_t group, int32_t at) -> Expected<Copy> {
    Copy copy;
    for (NodeId n : plan.subgraph) {
      const Node& node = graph_.nodes[n];
      if (needs_seed_[n]) spec.seeded_dropouts.push_back(n);
      MEMOPT_ASSIGN_OR_RETURN(const int32_t k, add_clone(n, ++copies[n], at, [&](ValueId x) {
                                if (auto it = copy.own.find(x); it != copy.own.end()) return it->second;
                                const ValueId r = recompute(x);
                                return r != kNone ? r : x;
                              }));
      private_group[static_cast<size_t>(k)] = group;
      for (size_t i = 0; i < node.outputs.size(); ++i) {
        if (node.outputs[i] != kNone) copy.own[node.outputs[i]] = spec.clones[k].outputs[i];
      }
      if (n == plan.entry) copy.entry_clone = k;
    }
    return copy;
  };

  for (size_t p : order) {
    const RecomputePlan& plan = scan_.plans[p];
    if (!plan_error_[p].empty()) {
      return Unsupported(fmt::format("plan \"{}:{}\" of node {}: {}", plan.cluster_id, plan.type(),
                                     graph_.nodes[plan.entry].Describe(), plan_error_[p]));
    }
    spec.applied_plans.push_back(p);
    const std::vector<NodeId>& readers = readers_[p];
    // Groups: the readers from starts[g - 1] (0 for the first group) up to the next start.
    // With a keep, the original serves everything before the first group's first reader.
    const auto kept = keep_of.find(p);
    const bool keeps = kept != keep_of.end();
    if (keeps) spec.kept_plans.push_back(p);
    const int32_t first_reader = keeps ? kept->second : 0;
    std::vector<int32_t> starts;
    if (auto it = starts_of.find(p); it != starts_of.end()) starts = it->second;
    std::sort(starts.begin(), starts.end());
    starts.erase(std::unique(starts.begin(), starts.end()), starts.end());
    starts.erase(std::remove_if(starts.begin(), starts.end(), [&](int32_t r) { return r <= first_reader; }),
                 starts.end());
    const size_t num_groups = starts.size() + 1;
    std::vector<int32_t> group_at(num_groups);  // base position of each group's first reader
    for (size_t g = 0; g < num_groups; ++g) {
      const size_t r = static_cast<size_t>(g == 0 ? first_reader : starts[g - 1]);
      group_at[g] = r < readers.size() ? position[readers[r]] : std::numeric_limits<int32_t>::max();
    }
    const int32_t kept_before = keeps ? group_at[0] : std::numeric_limits<int32_t>::min();
    const bool private_groups = is_private.count(p) > 0;
    std::vector<int32_t> group_id(num_groups, -1);
    if (private_groups) {
      for (int32_t& id : group_id) id = num_private_groups++;
    }
    auto group_of_position = [&](int32_t pos) {
      return static_cast<size_t>(std::upper_bound(group_at.begin() + 1, group_at.end(), pos) - (group_at.begin() + 1));
    };

    // The first group: ORT's clones.
    for (NodeId n : plan.subgraph) {
      const Node& node = graph_.nodes[n];
      if (recompute(FirstOutput(node)) != kNone) continue;  // cloned by an earlier plan: reuse
      if (needs_seed_[n]) spec.seeded_dropouts.push_back(n);
      MEMOPT_ASSIGN_OR_RETURN(const int32_t k, add_clone(n, 0, group_at[0], [&](ValueId x) {
                                const ValueId r = recompute(x);
                                return r != kNone ? r : x;
                              }));
      private_group[static_cast<size_t>(k)] = group_id[0];
      for (size_t i = 0; i < node.outputs.size(); ++i) {
        if (node.outputs[i] != kNone) recompute_of[node.outputs[i]] = spec.clones[k].outputs[i];
      }
      clone_of_node[n] = k;
    }
    const Node& entry = graph_.nodes[plan.entry];
    auto cloned = clone_of_node.find(plan.entry);
    if (cloned == clone_of_node.end()) return InternalError("entry node " + entry.Describe() + " was not cloned");
    std::vector<int32_t> entry_clone = {cloned->second};  // per group
    // Further groups: a copy of the whole subgraph each.
    for (size_t g = 1; g < num_groups; ++g) {
      MEMOPT_ASSIGN_OR_RETURN(const Copy copy, add_copy(plan, group_id[g], group_at[g]));
      entry_clone.push_back(copy.entry_clone);
    }

    // Rewire the entry's backward consumers (and clones reading it) to their group's clone.
    for (size_t i = 0; i < entry.outputs.size(); ++i) {
      const ValueId o = entry.outputs[i];
      if (o == kNone) continue;
      for (const auto& [consumer, slot] : graph_.values[o].consumers) {
        if (!backward_[consumer] || position[consumer] < kept_before) continue;
        spec.rewires.push_back({consumer, slot, spec.clones[entry_clone[group_of_position(position[consumer])]].outputs[i]});
      }
      auto readers_of = clone_readers.find(o);
      if (readers_of == clone_readers.end()) continue;
      const std::vector<std::pair<int32_t, int32_t>> clone_reads = std::move(readers_of->second);
      clone_readers.erase(readers_of);
      for (const auto& [k, slot] : clone_reads) {
        if (anchor[k] < kept_before) continue;  // reads the kept original
        const int32_t group = private_group[static_cast<size_t>(k)];
        if (group < 0) {
          spec.clones[k].inputs[slot] = spec.clones[entry_clone[group_of_position(anchor[k])]].outputs[i];
          continue;
        }
        auto made = private_copy.find({group, p});
        if (made == private_copy.end()) {
          MEMOPT_ASSIGN_OR_RETURN(Copy copy, add_copy(plan, group, anchor[k]));
          made = private_copy.emplace(std::pair(group, p), std::move(copy.own)).first;
        }
        spec.clones[k].inputs[slot] = made->second.at(o);
      }
    }
  }
  std::sort(spec.seeded_dropouts.begin(), spec.seeded_dropouts.end());
  spec.seeded_dropouts.erase(std::unique(spec.seeded_dropouts.begin(), spec.seeded_dropouts.end()), spec.seeded_dropouts.end());
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
