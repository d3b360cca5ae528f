#include "analysis/peak_estimate.h"

#include <algorithm>
#include <set>
#include <string>

#include "analysis/memory_layout.h"
#include "analysis/plan_table.h"
#include "shape/dims_check.h"

namespace memopt {

ValueLiveRanges ComputeValueLiveRanges(const Graph& graph, const ExecutionOrder& order, const DimBindings& dims) {
  ValueLiveRanges r;
  const size_t num_values = graph.values.size();
  const int32_t steps = static_cast<int32_t>(order.order.size());
  r.alloc.assign(num_values, ValueLiveRanges::kNever);
  r.release.assign(num_values, steps);
  for (size_t v = 0; v < num_values; ++v) {
    const Value& value = graph.values[v];
    if (value.producer != kNone) {
      const int32_t pos = order.position[value.producer];
      if (pos < 0) continue;
      r.alloc[v] = pos;
      if (value.is_graph_output) continue;
      int32_t last = pos;
      for (const auto& [consumer, slot] : value.consumers) last = std::max(last, order.position[consumer]);
      r.release[v] = last;
    } else if (value.is_graph_input || value.initializer.has_value()) {
      r.alloc[v] = ValueLiveRanges::kAlways;
    }
  }

  // Symbolic sizes, then one int64 evaluation per value (unbound dims at 1024).
  r.bytes.resize(num_values);
  std::set<std::string> unbound;
  for (size_t v = 0; v < num_values; ++v) {
    if (r.alloc[v] == ValueLiveRanges::kNever) continue;
    r.bytes[v] = graph.values[v].info.Bytes();
    if (!r.bytes[v].has_value()) {
      ++r.unsized_values;
      r.unsized.push_back(static_cast<ValueId>(v));
      continue;
    }
    for (const std::string& name : r.bytes[v]->Symbols()) {
      if (!dims.Get(name).has_value()) unbound.insert(name);
    }
  }
  DimBindings all = dims;
  for (const std::string& name : unbound) all.Set(name, kUnboundDimForOrdering);
  r.unbound_dims.assign(unbound.begin(), unbound.end());

  const int64_t max_countable = MaxCountableValueBytes(graph);
  r.size.assign(num_values, 0);
  for (size_t v = 0; v < num_values; ++v) {
    if (!r.bytes[v].has_value()) continue;
    Expected<int64_t> b = r.bytes[v]->EvaluateInt(all);
    if (!b.ok() || *b < 0 || *b > max_countable) {
      r.bytes[v].reset();
      ++r.unsized_values;
      r.unsized.push_back(static_cast<ValueId>(v));
      continue;
    }
    r.size[v] = *b;
  }
  return r;
}

PeakEstimate EstimatePeak(const Graph& graph, const ExecutionOrder& order, const std::vector<char>& is_stashed_value,
                          const DimBindings& dims) {
  PeakEstimate peak;
  const size_t num_values = graph.values.size();
  const int32_t steps = static_cast<int32_t>(order.order.size());
  constexpr int32_t kAlways = ValueLiveRanges::kAlways;
  const ValueLiveRanges r = ComputeValueLiveRanges(graph, order, dims);
  const std::vector<int32_t>& alloc = r.alloc;
  const std::vector<int32_t>& release = r.release;
  const std::vector<int64_t>& size = r.size;
  peak.unsized_values = r.unsized_values;
  peak.unsized = r.unsized;
  std::sort(peak.unsized.begin(), peak.unsized.end());
  peak.unbound_dims = r.unbound_dims;
  peak.sized = r.unbound_dims.empty();

  std::vector<int64_t> alloc_at(steps, 0), free_at(steps, 0);
  for (size_t v = 0; v < num_values; ++v) {
    if (!r.bytes[v].has_value()) continue;
    if (alloc[v] == kAlways) {
      peak.weights_and_inputs_bytes += size[v];
    } else {
      alloc_at[alloc[v]] += size[v];
      if (release[v] < steps) free_at[release[v]] += size[v];
    }
  }

  int64_t live = peak.weights_and_inputs_bytes;
  peak.peak_bytes = live;
  if (peak.sized) peak.live_after_step.resize(steps);
  for (int32_t i = 0; i < steps; ++i) {
    live += alloc_at[i];
    if (peak.peak_position < 0 || live > peak.peak_bytes) {
      peak.peak_bytes = live;
      peak.peak_position = i;
    }
    live -= free_at[i];
    if (peak.sized) peak.live_after_step[i] = live;
  }

  // What is live at the peak step, symbolically.
  const int32_t p = peak.peak_position;
  SymExpr total(0), stashed(0);
  for (size_t v = 0; v < num_values; ++v) {
    if (!r.bytes[v].has_value()) continue;
    const bool live_at_peak = alloc[v] == kAlways || (p >= 0 && alloc[v] >= 0 && alloc[v] <= p && release[v] >= p);
    if (!live_at_peak) continue;
    total += *r.bytes[v];
    if (v < is_stashed_value.size() && is_stashed_value[v] && alloc[v] >= 0) {
      stashed += *r.bytes[v];
      peak.stashed_bytes_at_peak += size[v];
    }
  }
  peak.peak_expr = total;
  peak.stashed_expr_at_peak = stashed;
  if (p >= 0) peak.peak_node = order.order[p];
  if (peak.sized) {
    const MemoryLayout layout = PlanMemoryLayout(r, steps);
    peak.arena_bytes = layout.arena_bytes;
    peak.footprint_bytes = layout.arena_bytes + peak.weights_and_inputs_bytes;
  }
  return peak;
}

}  // namespace memopt
