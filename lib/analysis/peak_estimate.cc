#include "analysis/peak_estimate.h"

#include <algorithm>
#include <limits>
#include <set>
#include <string>

#include "analysis/plan_table.h"

namespace memopt {

PeakEstimate EstimatePeak(const Graph& graph, const ExecutionOrder& order, const std::vector<char>& is_stashed_value,
                          const DimBindings& dims) {
  PeakEstimate peak;
  const size_t num_values = graph.values.size();
  const int32_t steps = static_cast<int32_t>(order.order.size());
  constexpr int32_t kNever = -2;   // not a value the simulation tracks
  constexpr int32_t kAlways = -1;  // initializer or graph input

  // When each value is allocated (step) and freed (step, after the peak check; `steps` = never).
  std::vector<int32_t> alloc(num_values, kNever);
  std::vector<int32_t> release(num_values, steps);
  for (size_t v = 0; v < num_values; ++v) {
    const Value& value = graph.values[v];
    if (value.producer != kNone) {
      const int32_t pos = order.position[value.producer];
      if (pos < 0) continue;
      alloc[v] = pos;
      if (value.is_graph_output) continue;
      int32_t last = pos;
      for (const auto& [consumer, slot] : value.consumers) last = std::max(last, order.position[consumer]);
      release[v] = last;
    } else if (value.is_graph_input || value.initializer.has_value()) {
      alloc[v] = kAlways;
    }
  }

  // Symbolic sizes, then one int64 evaluation per value (unbound dims at 1024).
  std::vector<std::optional<SymExpr>> bytes(num_values);
  std::set<std::string> unbound;
  for (size_t v = 0; v < num_values; ++v) {
    if (alloc[v] == kNever) continue;
    bytes[v] = graph.values[v].info.Bytes();
    if (!bytes[v].has_value()) {
      ++peak.unsized_values;
      continue;
    }
    for (const std::string& name : bytes[v]->Symbols()) {
      if (!dims.Get(name).has_value()) unbound.insert(name);
    }
  }
  DimBindings all = dims;
  for (const std::string& name : unbound) all.Set(name, kUnboundDimForOrdering);
  peak.unbound_dims.assign(unbound.begin(), unbound.end());
  peak.sized = unbound.empty();

  const int64_t max_countable = std::numeric_limits<int64_t>::max() / static_cast<int64_t>(num_values + 1);
  std::vector<int64_t> size(num_values, 0);
  std::vector<int64_t> alloc_at(steps, 0), free_at(steps, 0);
  for (size_t v = 0; v < num_values; ++v) {
    if (!bytes[v].has_value()) continue;
    Expected<int64_t> b = bytes[v]->EvaluateInt(all);
    // A size that overflows, or so large that a sum of all values could overflow int64, cannot
    // be counted (each counted size <= INT64_MAX / values keeps every running total in range).
    if (!b.ok() || *b < 0 || *b > max_countable) {
      bytes[v].reset();
      ++peak.unsized_values;
      continue;
    }
    size[v] = *b;
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
    if (!bytes[v].has_value()) continue;
    const bool live_at_peak = alloc[v] == kAlways || (p >= 0 && alloc[v] >= 0 && alloc[v] <= p && release[v] >= p);
    if (!live_at_peak) continue;
    total += *bytes[v];
    if (v < is_stashed_value.size() && is_stashed_value[v] && alloc[v] >= 0) {
      stashed += *bytes[v];
      peak.stashed_bytes_at_peak += size[v];
    }
  }
  peak.peak_expr = total;
  peak.stashed_expr_at_peak = stashed;
  if (p >= 0) peak.peak_node = order.order[p];
  return peak;
}

}  // namespace memopt
