#include "plan/step_effect.h"

#include <algorithm>
#include <deque>
#include <limits>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "analysis/exec_order.h"
#include "rewrite/recompute_rewrite.h"

namespace memopt {
namespace {

constexpr int32_t kNever = std::numeric_limits<int32_t>::max();  ///< a graph output: never freed
constexpr int32_t kNodeSlot = StepTime::kNodeSlot;
using Time = StepTime;

/// A change of the live total: at `time`, before (phase 0) or after (phase 1) its peak check.
struct Event {
  Time time;
  int32_t phase = 0;
  int64_t delta = 0;
};

/// Appends [begin, end) with `delta` (nothing when 0) to ascending runs, joined with the last run
/// when it ends at `begin` with the same delta.
void AppendRun(std::vector<StepRun>& runs, int32_t begin, int32_t end, int64_t delta) {
  if (begin >= end || delta == 0) return;
  if (!runs.empty() && runs.back().end == begin && runs.back().delta == delta) {
    runs.back().end = end;
  } else {
    runs.push_back({begin, end, delta});
  }
}

/// The nonzero entries of a per-step change as runs.
std::vector<StepRun> RunsOf(const std::vector<int64_t>& change) {
  std::vector<StepRun> runs;
  for (size_t n = 0; n < change.size(); ++n) {
    AppendRun(runs, static_cast<int32_t>(n), static_cast<int32_t>(n + 1), change[n]);
  }
  return runs;
}

}  // namespace

Expected<StepEffects> StepEffects::Create(const PlanEvaluator& evaluator, const PlanEvaluation* base) {
  StepEffects fx(evaluator);
  const Graph& graph = evaluator.spec_builder().graph();
  const ScanResult& scan = evaluator.spec_builder().scan();
  if (base != nullptr && base->step_original.size() == base->live_at_step.size() && !base->live_at_step.empty()) {
    fx.base_ = *base;
  } else {
    MEMOPT_ASSIGN_OR_RETURN(fx.base_, evaluator.Evaluate({}, /*want_curve=*/true));
  }
  const size_t num_nodes = graph.nodes.size();
  fx.position_.assign(num_nodes, -1);
  for (size_t i = 0; i < fx.base_.step_original.size(); ++i) {
    const NodeId n = fx.base_.step_original[i];
    if (n == kNone) return InternalError("the base evaluation has a clone step");
    fx.position_[n] = static_cast<int32_t>(fx.order_.size());
    fx.order_.push_back(n);
  }
  fx.base_peak_ = fx.base_.live_at_step;
  const size_t steps = fx.order_.size();

  // Written order of the original nodes (what clones are placed among in the file).
  MEMOPT_ASSIGN_OR_RETURN(std::vector<NodeId> written, RewriteBaseOrder(graph, scan));
  fx.file_position_.assign(num_nodes, -1);
  for (size_t i = 0; i < written.size(); ++i) fx.file_position_[written[i]] = static_cast<int32_t>(i);
  fx.yield_style_ = IsYieldStyle(graph, scan.boundary);

  // Value intervals of the base, as the evaluator counts them; the curve they give must be the
  // simulated one, else the local model stays off.
  fx.base_alloc_.assign(steps, 0);
  fx.base_free_.assign(graph.values.size(), -1);
  std::vector<int64_t> freed(steps + 1, 0);
  for (size_t v = 0; v < graph.values.size(); ++v) {
    const Value& value = graph.values[v];
    const int64_t size = evaluator.value_bytes(static_cast<ValueId>(v));
    if (size == 0 || value.producer == kNone) continue;
    const int32_t pos = fx.position_[value.producer];
    if (pos < 0) continue;
    fx.base_alloc_[static_cast<size_t>(pos)] += size;
    int32_t last = pos;
    for (const auto& [consumer, slot] : value.consumers) last = std::max(last, fx.position_[consumer]);
    fx.base_free_[v] = value.is_graph_output ? kNever : last;
    if (!value.is_graph_output) freed[static_cast<size_t>(last)] += size;
  }
  int64_t live = evaluator.weights_and_inputs_bytes();
  bool matches = steps == scan.order.order.size();
  for (size_t i = 0; i < steps && matches; ++i) {
    live += fx.base_alloc_[i];
    matches = live == fx.base_peak_[i] && fx.order_[i] == scan.order.order[i];
    live -= freed[i];
  }

  // The main path of ORT's lazy backward schedule: backward nodes that depend on the YieldOp.
  // Clones are not on it, so it is the same in every rewritten graph.
  fx.main_.assign(num_nodes, 0);
  if (fx.yield_style_ && scan.boundary.node != kNone) {
    std::deque<NodeId> queue = {scan.boundary.node};
    while (!queue.empty()) {
      const NodeId n = queue.front();
      queue.pop_front();
      for (ValueId v : graph.nodes[n].outputs) {
        if (v == kNone) continue;
        for (const auto& [c, slot] : graph.values[v].consumers) {
          if (!fx.main_[c] && fx.position_[c] > scan.order.last_forward) {
            fx.main_[c] = 1;
            queue.push_back(c);
          }
        }
      }
    }
  }
  fx.branch_.assign(num_nodes, 0);
  fx.owner_.assign(num_nodes, -1);
  if (fx.yield_style_) {
    int32_t owner = -1;  // the next main node, walking backwards
    for (size_t i = steps; i-- > static_cast<size_t>(std::max(scan.order.last_forward + 1, 0));) {
      const NodeId n = fx.order_[i];
      if (fx.main_[n]) {
        owner = static_cast<int32_t>(i);
        continue;
      }
      fx.branch_[n] = 1;
      fx.owner_[n] = owner;
    }
  }
  fx.local_ = matches;
  return fx;
}

std::vector<int64_t> StepEffects::StepPeaks(const PlanEvaluation& e) const {
  std::vector<int64_t> peaks(order_.size(), 0);
  int64_t pending = 0;  // clone steps since the last original step
  for (size_t i = 0; i < e.live_at_step.size(); ++i) {
    const NodeId n = e.step_original[i];
    if (n == kNone) {
      pending = std::max(pending, e.live_at_step[i]);
      continue;
    }
    const int32_t pos = position_[n];
    if (pos >= 0) peaks[static_cast<size_t>(pos)] = std::max(pending, e.live_at_step[i]);
    pending = 0;
  }
  return peaks;
}

Expected<std::vector<StepRun>> StepEffects::SimulatedEffectOf(const std::vector<size_t>& plans) const {
  MEMOPT_ASSIGN_OR_RETURN(PlanEvaluation e, ev_.Evaluate(plans, /*want_curve=*/true));
  std::vector<int64_t> change = StepPeaks(e);
  for (size_t n = 0; n < change.size(); ++n) change[n] -= base_peak_[n];
  return RunsOf(change);
}

bool StepEffects::PlaceLazily(const RewriteSpec& spec, const std::vector<int32_t>& producer,
                              std::vector<StepTime>& at) const {
  // ORT's MEMORY_EFFICIENT order of the written file (analysis/exec_order.h, step 5): every
  // main-path node, in order, is preceded by its unplaced branch ancestors (backward nodes off the
  // main path, clones among them), sorted by their rank in a FIFO Kahn pass over the branch nodes
  // (ready nodes in written-file order). The rank order of a set closed under branch producers is
  // that of a Kahn pass over the set alone, so each batch that gains clones is ordered from the
  // closure of its members. Nodes are encoded as original ids (>= 0) or clones -(k + 1).
  const Graph& graph = ev_.spec_builder().graph();
  const size_t num_clones = spec.clones.size();
  const size_t num_original = spec.num_original_values;
  const int32_t steps = static_cast<int32_t>(order_.size());
  const ClonePlacement written = PlaceClones(spec, file_position_, steps);
  std::vector<Time> file_key(num_clones);  // where each clone is written
  for (size_t i = 0; i < written.sequence.size(); ++i) {
    const int32_t k = written.sequence[i];
    const bool same = i > 0 && written.before[written.sequence[i - 1]] == written.before[k];
    file_key[static_cast<size_t>(k)] = {written.before[k], same ? file_key[written.sequence[i - 1]].slot + 1 : 0};
  }
  auto key = [&](int32_t x) {
    return x >= 0 ? Time{file_position_[x], kNodeSlot} : file_key[static_cast<size_t>(-x - 1)];
  };
  std::unordered_map<int64_t, ValueId> rewired_slot;  // (node << 32 | slot) -> clone value
  for (const Rewire& r : spec.rewires) rewired_slot[(static_cast<int64_t>(r.node) << 32) | r.slot] = r.value;
  // Branch producers of a node, one per input slot.
  auto for_each_producer = [&](int32_t x, auto&& fn) {
    if (x < 0) {
      for (ValueId v : spec.clones[static_cast<size_t>(-x - 1)].inputs) {
        if (v != kNone && spec.IsCloneValue(v)) fn(-(producer[v - num_original] + 1));
      }
      return;
    }
    const Node& node = graph.nodes[x];
    for (size_t slot = 0; slot < node.inputs.size(); ++slot) {
      if (node.inputs[slot] == kNone) continue;
      if (auto it = rewired_slot.find((static_cast<int64_t>(x) << 32) | static_cast<int64_t>(slot)); it != rewired_slot.end()) {
        fn(-(producer[it->second - num_original] + 1));
        continue;
      }
      const NodeId p = graph.values[node.inputs[slot]].producer;
      if (p != kNone && branch_[p]) fn(p);
    }
  };

  // The batch each clone joins: that of the first main-path node it is an ancestor of.
  std::vector<std::pair<int32_t, int32_t>> needs;  // (owner position, clone) for each rewire
  for (const Rewire& r : spec.rewires) {
    const int32_t owner = main_[r.node] ? position_[r.node] : branch_[r.node] ? owner_[r.node] : -1;
    if (owner < 0) return false;  // a trailing branch reader, or one not scheduled
    needs.emplace_back(owner, producer[r.value - num_original]);
  }
  std::sort(needs.begin(), needs.end());
  std::vector<int32_t> batch_of(num_clones, -1);
  std::vector<int32_t> stack;
  std::vector<std::pair<int32_t, std::vector<int32_t>>> batches;  // (owner position, clones)
  for (const std::pair<int32_t, int32_t>& need : needs) {
    const int32_t owner = need.first, k0 = need.second;  // named: lambdas below capture them
    if (batch_of[static_cast<size_t>(k0)] >= 0) continue;
    if (batches.empty() || batches.back().first != owner) batches.emplace_back(owner, std::vector<int32_t>{});
    batch_of[static_cast<size_t>(k0)] = owner;
    stack.push_back(k0);
    while (!stack.empty()) {  // k0 and its unplaced clone ancestors
      const int32_t k = stack.back();
      stack.pop_back();
      batches.back().second.push_back(k);
      for_each_producer(-(k + 1), [&](int32_t p) {
        const size_t c = static_cast<size_t>(-p - 1);
        if (batch_of[c] < 0) {
          batch_of[c] = owner;
          stack.push_back(static_cast<int32_t>(c));
        }
      });
    }
  }
  for (size_t k = 0; k < num_clones; ++k) {
    if (batch_of[k] < 0) at[k] = {steps, static_cast<int32_t>(k)};  // nothing reads it: after the last step
  }

  constexpr size_t kMaxClosure = 1 << 14;
  std::unordered_map<int32_t, int32_t> index;  // node -> index in `members`
  std::vector<int32_t> members, in_degree, ready_list, released;
  std::vector<std::vector<int32_t>> consumers;
  for (const auto& [owner, clones] : batches) {
    // The batch: the base batch before the owner (branch nodes right before it) and the clones.
    int32_t first = owner;
    while (first > 0 && branch_[order_[static_cast<size_t>(first - 1)]]) --first;
    index.clear();
    members.clear();
    auto add = [&](int32_t x) {
      if (index.emplace(x, static_cast<int32_t>(members.size())).second) members.push_back(x);
    };
    for (int32_t p = first; p < owner; ++p) add(order_[static_cast<size_t>(p)]);
    for (int32_t k : clones) add(-(k + 1));
    const size_t batch_size = members.size();
    for (size_t i = 0; i < members.size(); ++i) {  // closure under branch producers
      if (members.size() > kMaxClosure) return false;
      for_each_producer(members[i], add);
    }
    // FIFO Kahn over the closure, ready nodes in written-file order.
    const size_t n = members.size();
    in_degree.assign(n, 0);
    consumers.assign(n, {});
    for (size_t i = 0; i < n; ++i) {
      for_each_producer(members[i], [&](int32_t p) {
        ++in_degree[i];
        consumers[static_cast<size_t>(index.at(p))].push_back(static_cast<int32_t>(i));
      });
    }
    auto by_key = [&](int32_t a, int32_t b) { return key(members[static_cast<size_t>(a)]) < key(members[static_cast<size_t>(b)]); };
    std::deque<int32_t> ready;
    for (size_t i = 0; i < n; ++i) {
      if (in_degree[i] == 0) ready.push_back(static_cast<int32_t>(i));
    }
    std::sort(ready.begin(), ready.end(), by_key);
    ready_list.clear();
    while (!ready.empty()) {
      const int32_t i = ready.front();
      ready.pop_front();
      if (static_cast<size_t>(i) < batch_size) ready_list.push_back(members[static_cast<size_t>(i)]);
      released.clear();
      for (int32_t c : consumers[static_cast<size_t>(i)]) {
        if (--in_degree[static_cast<size_t>(c)] == 0) released.push_back(c);
      }
      std::sort(released.begin(), released.end(), by_key);
      ready.insert(ready.end(), released.begin(), released.end());
    }
    if (ready_list.size() != batch_size) return false;  // a cycle: cannot happen in a valid rewrite
    // The original branch nodes must keep their base order; each clone runs before the next one.
    int32_t next_original = first;
    int32_t slot = 0;
    for (int32_t x : ready_list) {
      if (x >= 0) {
        if (position_[x] != next_original) return false;
        ++next_original;
        slot = 0;
        continue;
      }
      at[static_cast<size_t>(-x - 1)] = {next_original, slot++};
    }
  }
  return true;
}

Expected<std::vector<StepRun>> StepEffects::EffectOf(const std::vector<size_t>& plans, bool* simulated,
                                                     std::vector<int64_t>* keys) const {
  if (simulated != nullptr) *simulated = false;
  const Graph& graph = ev_.spec_builder().graph();
  MEMOPT_ASSIGN_OR_RETURN(RewriteSpec spec, ev_.spec_builder().Build(plans));
  const size_t num_clones = spec.clones.size();
  const int32_t steps = static_cast<int32_t>(order_.size());
  const size_t num_original = spec.num_original_values;
  if (keys != nullptr) {  // what this unit's rewrite touches (see the header)
    keys->clear();
    // Weights, graph inputs and values of no size have no interval to change.
    auto counted = [&](ValueId v) { return graph.values[v].producer != kNone && ev_.value_bytes(v) != 0; };
    for (const CloneSpec& clone : spec.clones) {
      keys->push_back(3 * static_cast<int64_t>(clone.original));
      for (ValueId v : clone.inputs) {
        if (v != kNone && !spec.IsCloneValue(v) && counted(v)) keys->push_back(3 * static_cast<int64_t>(v) + 1);
      }
      // What it recomputes: another unit's clone reading one of these values reads the clone.
      for (ValueId v : graph.nodes[clone.original].outputs) {
        if (v != kNone && counted(v)) keys->push_back(3 * static_cast<int64_t>(v) + 1);
      }
    }
    for (const Rewire& r : spec.rewires) {
      const ValueId v = graph.nodes[r.node].inputs[static_cast<size_t>(r.slot)];
      if (counted(v)) keys->push_back(3 * static_cast<int64_t>(v) + 1);
    }
  }
  auto fall_back = [&]() -> Expected<std::vector<StepRun>> {
    if (simulated != nullptr) *simulated = true;
    return SimulatedEffectOf(plans);
  };
  if (!local_) return fall_back();
  if (num_clones == 0) return std::vector<StepRun>{};

  std::vector<int32_t> producer(spec.clone_values.size(), -1);  // clone value -> clone index
  for (size_t k = 0; k < num_clones; ++k) {
    for (ValueId v : spec.clones[k].outputs) {
      if (v != kNone) producer[v - num_original] = static_cast<int32_t>(k);
    }
  }

  // Where each clone runs: (base position it precedes, slot in that group).
  std::vector<Time> at(num_clones);
  if (!yield_style_) {
    // The written order is the execution order.
    const ClonePlacement placement = PlaceClones(spec, position_, steps);
    int32_t slot = 0;
    for (size_t i = 0; i < placement.sequence.size(); ++i) {
      const int32_t k = placement.sequence[i];
      slot = i > 0 && placement.before[placement.sequence[i - 1]] == placement.before[k] ? slot + 1 : 0;
      at[static_cast<size_t>(k)] = {placement.before[k], slot};
    }
  } else if (!PlaceLazily(spec, producer, at)) {
    return fall_back();
  }

  if (keys != nullptr) {
    for (const Time& t : at) keys->push_back(3 * static_cast<int64_t>(t.pos) + 2);
    std::sort(keys->begin(), keys->end());
    keys->erase(std::unique(keys->begin(), keys->end()), keys->end());
  }

  // Interval changes of the values the rewrite touches.
  std::vector<Event> events;
  auto add_interval = [&](Time from, int32_t from_phase, Time to, int64_t size) {
    events.push_back({from, from_phase, size});
    events.push_back({to, 1, -size});
  };
  // Readers of each value that the rewrite moved (rewired slots) or added (clones), by value.
  std::unordered_map<ValueId, std::vector<Time>> clone_reads;
  std::unordered_map<ValueId, std::vector<std::pair<NodeId, int32_t>>> rewired;
  std::vector<std::vector<Time>> clone_value_reads(spec.clone_values.size());
  for (size_t k = 0; k < num_clones; ++k) {
    for (ValueId v : spec.clones[k].inputs) {
      if (v == kNone) continue;
      if (spec.IsCloneValue(v)) {
        clone_value_reads[v - num_original].push_back(at[k]);
      } else {
        clone_reads[v].push_back(at[k]);
      }
    }
  }
  for (const Rewire& r : spec.rewires) {
    rewired[graph.nodes[r.node].inputs[static_cast<size_t>(r.slot)]].emplace_back(r.node, r.slot);
    clone_value_reads[r.value - num_original].push_back({position_[r.node], kNodeSlot});
  }
  auto changed_original = [&](ValueId v) {
    const int32_t old_free = base_free_[v];
    if (old_free < 0 || old_free == kNever) return;  // not counted, or never freed
    const Value& value = graph.values[v];
    Time free_at{position_[value.producer], kNodeSlot};
    auto moved = rewired.find(v);
    for (const auto& [consumer, slot] : value.consumers) {
      if (position_[consumer] < 0) continue;
      if (moved != rewired.end() &&
          std::find(moved->second.begin(), moved->second.end(), std::pair(consumer, slot)) != moved->second.end()) {
        continue;
      }
      free_at = std::max(free_at, Time{position_[consumer], kNodeSlot});
    }
    if (auto reads = clone_reads.find(v); reads != clone_reads.end()) {
      for (const Time& t : reads->second) free_at = std::max(free_at, t);
    }
    const Time old_at{old_free, kNodeSlot};
    const int64_t size = ev_.value_bytes(v);
    if (free_at < old_at) add_interval(free_at, 1, old_at, -size);  // (new, old]: no longer live
    if (old_at < free_at) add_interval(old_at, 1, free_at, size);   // (old, new]: live longer
  };
  for (const auto& [v, reads] : clone_reads) {
    if (rewired.count(v) == 0) changed_original(v);
  }
  for (const auto& [v, slots] : rewired) changed_original(v);
  for (size_t c = 0; c < spec.clone_values.size(); ++c) {
    const int64_t size = ev_.value_bytes(spec.clone_values[c]);
    if (size == 0) continue;
    const Time made = at[static_cast<size_t>(producer[c])];
    Time free_at = made;
    for (const Time& t : clone_value_reads[c]) free_at = std::max(free_at, t);
    add_interval(made, 0, free_at, size);
  }

  // Query points: every clone slot and the node step of every group position.
  std::vector<int32_t> group_positions;
  for (size_t k = 0; k < num_clones; ++k) {
    if (at[k].pos >= steps) continue;
    events.push_back({at[k], 0, 0});
    group_positions.push_back(at[k].pos);
  }
  std::sort(group_positions.begin(), group_positions.end());
  group_positions.erase(std::unique(group_positions.begin(), group_positions.end()), group_positions.end());
  for (int32_t p : group_positions) events.push_back({Time{p, kNodeSlot}, 0, 0});
  std::sort(events.begin(), events.end(), [](const Event& a, const Event& b) {
    return std::tie(a.time, a.phase) < std::tie(b.time, b.phase);
  });

  // Sweep: `cur` is the change of the live total at the current time.
  std::vector<StepRun> runs;
  int64_t cur = 0;
  int32_t next_pos = 0;                                 // positions below are done
  int64_t slot_max = std::numeric_limits<int64_t>::min();  // clone slots of the current position
  size_t i = 0;
  while (i < events.size() && events[i].time.pos < steps) {
    const Time t = events[i].time;
    AppendRun(runs, next_pos, t.pos, cur);
    next_pos = t.pos;
    for (; i < events.size() && events[i].time == t && events[i].phase == 0; ++i) cur += events[i].delta;
    const int64_t value = cur;
    for (; i < events.size() && events[i].time == t; ++i) cur += events[i].delta;
    const size_t p = static_cast<size_t>(t.pos);
    if (t.slot != kNodeSlot) {
      slot_max = std::max(slot_max, value);
      continue;
    }
    int64_t delta = value;
    if (slot_max != std::numeric_limits<int64_t>::min()) {
      const int64_t before_alloc = base_peak_[p] - base_alloc_[p];
      delta = std::max(before_alloc + slot_max, base_peak_[p] + value) - base_peak_[p];
      slot_max = std::numeric_limits<int64_t>::min();
    }
    AppendRun(runs, t.pos, t.pos + 1, delta);
    next_pos = t.pos + 1;
  }
  AppendRun(runs, next_pos, steps, cur);
  return runs;
}

}  // namespace memopt
