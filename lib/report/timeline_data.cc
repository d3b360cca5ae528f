#include "report/timeline_data.h"

#include <algorithm>
#include <cctype>

#include "analysis/peak_estimate.h"
#include "analysis/stashed.h"

namespace memopt {

namespace {

constexpr int32_t kNever = ValueLiveRanges::kNever;
constexpr int32_t kAlways = ValueLiveRanges::kAlways;

bool EndsWithGrad(const std::string& name) {
  static constexpr const char kSuffix[] = "_grad";
  constexpr size_t n = sizeof(kSuffix) - 1;
  if (name.size() < n) return false;
  for (size_t i = 0; i < n; ++i) {
    if (std::tolower(static_cast<unsigned char>(name[name.size() - n + i])) != kSuffix[i]) return false;
  }
  return true;
}

}  // namespace

const char* LiveKindKey(LiveKind kind) {
  switch (kind) {
    case LiveKind::kWeightsAndInputs: return "weights_and_inputs";
    case LiveKind::kStashed: return "stashed";
    case LiveKind::kTransient: return "transient";
    case LiveKind::kGradients: return "gradients";
  }
  return "transient";
}

const char* LiveKindLabel(LiveKind kind) {
  switch (kind) {
    case LiveKind::kWeightsAndInputs: return "weights and inputs";
    case LiveKind::kStashed: return "stashed activations";
    case LiveKind::kTransient: return "transient activations";
    case LiveKind::kGradients: return "gradients";
  }
  return "transient activations";
}

int64_t TimelineData::Total(size_t step) const {
  int64_t total = 0;
  for (const auto& series : live) total += series[step];
  return total;
}

TimelineData ComputeTimeline(const Graph& graph, const ExecutionOrder& order, const std::vector<char>& is_stashed_value,
                             const DimBindings& dims) {
  TimelineData t;
  t.graph = &graph;
  t.order = order.order;
  t.last_forward = order.last_forward;
  const size_t num_values = graph.values.size();
  const int32_t steps = static_cast<int32_t>(order.order.size());

  // Allocation, release and sizes: the rules of EstimatePeak.
  const ValueLiveRanges r = ComputeValueLiveRanges(graph, order, dims);
  const std::vector<int32_t>& alloc = r.alloc;
  const std::vector<int32_t>& release = r.release;
  t.unsized_values = r.unsized_values;
  t.unbound_dims = r.unbound_dims;
  t.sized = r.unbound_dims.empty();

  // Kinds, and per kind what each step allocates and frees.
  t.value_bytes.assign(num_values, 0);
  t.value_kind.assign(num_values, -1);
  std::array<std::vector<int64_t>, kNumLiveKinds> alloc_at, free_at;
  for (int k = 0; k < kNumLiveKinds; ++k) {
    alloc_at[k].assign(steps, 0);
    free_at[k].assign(steps, 0);
  }
  std::array<int64_t, kNumLiveKinds> always{};
  for (size_t v = 0; v < num_values; ++v) {
    if (alloc[v] == kNever) continue;
    LiveKind kind = LiveKind::kTransient;
    const Value& value = graph.values[v];
    if (alloc[v] == kAlways) {
      kind = LiveKind::kWeightsAndInputs;
    } else if (v < is_stashed_value.size() && is_stashed_value[v]) {
      kind = LiveKind::kStashed;
    } else if ((alloc[v] > order.last_forward || graph.node(value.producer).op_type == "YieldOp") &&
               (value.is_graph_output || EndsWithGrad(value.name))) {
      kind = LiveKind::kGradients;
    }
    t.value_kind[v] = static_cast<int8_t>(kind);
    if (!r.bytes[v]) continue;
    const int64_t b = r.size[v];
    t.value_bytes[v] = b;
    const int k = static_cast<int>(kind);
    if (alloc[v] == kAlways) {
      always[k] += b;
    } else {
      alloc_at[k][alloc[v]] += b;
      if (release[v] < steps) free_at[k][release[v]] += b;
    }
  }

  // The sweep: allocate, read (peak check), free.
  std::array<int64_t, kNumLiveKinds> live = always;
  for (int k = 0; k < kNumLiveKinds; ++k) t.live[k].resize(steps);
  t.live_after.resize(steps);
  t.peak_bytes = 0;
  for (int64_t b : always) t.peak_bytes += b;
  for (int32_t i = 0; i < steps; ++i) {
    int64_t total = 0;
    for (int k = 0; k < kNumLiveKinds; ++k) {
      live[k] += alloc_at[k][i];
      t.live[k][i] = live[k];
      total += live[k];
    }
    if (t.peak_position < 0 || total > t.peak_bytes) {
      t.peak_bytes = total;
      t.peak_position = i;
    }
    int64_t after = 0;
    for (int k = 0; k < kNumLiveKinds; ++k) {
      live[k] -= free_at[k][i];
      after += live[k];
    }
    t.live_after[i] = after;
  }
  if (t.peak_position >= 0) t.peak_node = order.order[t.peak_position];

  // The biggest tensors live at the peak.
  const int32_t p = t.peak_position;
  std::vector<TimelineTensor> at_peak;
  for (size_t v = 0; v < num_values; ++v) {
    if (t.value_kind[v] < 0 || t.value_bytes[v] == 0) continue;
    const bool live_at_peak = alloc[v] == kAlways || (p >= 0 && alloc[v] >= 0 && alloc[v] <= p && release[v] >= p);
    if (!live_at_peak) continue;
    at_peak.push_back({static_cast<ValueId>(v), static_cast<LiveKind>(t.value_kind[v]), t.value_bytes[v]});
  }
  const size_t keep = std::min(at_peak.size(), TimelineData::kMaxPeakTensors);
  std::partial_sort(at_peak.begin(), at_peak.begin() + keep, at_peak.end(),
                    [](const TimelineTensor& a, const TimelineTensor& b) {
                      return a.bytes != b.bytes ? a.bytes > b.bytes : a.value < b.value;
                    });
  at_peak.resize(keep);
  t.live_at_peak = std::move(at_peak);
  return t;
}

TimelineData ComputeGraphTimeline(const Graph& graph, const ExecutionOrder& order, const DimBindings& dims) {
  StashedCandidates stashed = FindStashedCandidates(graph, order);
  // As the scan's peak estimate: a YieldOp's outputs are the incoming gradients, not stashed.
  for (NodeId n : order.order) {
    if (graph.node(n).op_type != "YieldOp") continue;
    for (ValueId v : graph.node(n).outputs) {
      if (v != kNone) stashed.is_stashed_value[v] = 0;
    }
  }
  return ComputeTimeline(graph, order, stashed.is_stashed_value, dims);
}

std::vector<TimelineBucket> AggregateTimeline(const TimelineData& data, size_t max_points) {
  std::vector<TimelineBucket> buckets;
  const int32_t steps = static_cast<int32_t>(data.steps());
  if (steps == 0) return buckets;
  max_points = std::max<size_t>(max_points, 1);
  const int32_t width = static_cast<int32_t>((static_cast<size_t>(steps) + max_points - 1) / max_points);
  const int32_t split = data.last_forward >= 0 && data.last_forward < steps - 1 ? data.last_forward + 1 : -1;
  auto add = [&](int32_t first, int32_t last) {
    TimelineBucket b;
    b.first = first;
    b.last = last;
    b.rep = first;
    b.max_total = b.min_total = data.Total(first);
    for (int32_t i = first + 1; i <= last; ++i) {
      const int64_t total = data.Total(i);
      if (total > b.max_total) {
        b.max_total = total;
        b.rep = i;
      }
      b.min_total = std::min(b.min_total, total);
    }
    for (int k = 0; k < kNumLiveKinds; ++k) b.at_rep[k] = data.live[k][b.rep];
    buckets.push_back(b);
  };
  for (int32_t first = 0; first < steps; first += width) {
    const int32_t last = std::min(first + width, steps) - 1;
    if (split > first && split <= last) {
      add(first, split - 1);
      add(split, last);
    } else {
      add(first, last);
    }
  }
  return buckets;
}

}  // namespace memopt
