#include "exec/memory_tracker.h"

#include <algorithm>
#include <string>

namespace memopt {

namespace {
constexpr int32_t kNever = -2;
constexpr int32_t kAlways = -1;
}  // namespace

MemoryTracker::MemoryTracker(const Graph& graph, const std::vector<int32_t>& position, int32_t steps)
    : alloc_(graph.values.size(), kNever),
      release_(graph.values.size(), steps),
      bytes_(graph.values.size(), 0),
      release_at_(static_cast<size_t>(steps)),
      steps_(steps) {
  for (size_t v = 0; v < graph.values.size(); ++v) {
    const Value& value = graph.values[v];
    if (value.producer == kNone) continue;
    const int32_t pos = position[value.producer];
    if (pos < 0) continue;
    alloc_[v] = pos;
    if (value.is_graph_output) continue;
    int32_t last = pos;
    for (const auto& [consumer, slot] : value.consumers) last = std::max(last, position[consumer]);
    release_[v] = last;
    release_at_[last].push_back(static_cast<ValueId>(v));
  }
}

void MemoryTracker::AddAlwaysLive(ValueId value, int64_t bytes) {
  alloc_[value] = kAlways;
  release_[value] = steps_;
  bytes_[value] = bytes;
  live_ += bytes;
  always_ += bytes;
  peak_ = live_;
}

void MemoryTracker::Allocate(ValueId value, int64_t bytes) {
  bytes_[value] = bytes;
  live_ += bytes;
}

void MemoryTracker::CheckPeak(int32_t step, NodeId node) {
  if (peak_position_ < 0 || live_ > peak_) {
    peak_ = live_;
    peak_position_ = step;
    peak_node_ = node;
  }
}

void MemoryTracker::Release(ValueId value) { live_ -= bytes_[value]; }

MemoryStats MemoryTracker::Stats(const Graph& graph, const std::vector<NodeId>& order) const {
  MemoryStats stats;
  stats.peak_bytes = peak_;
  stats.peak_position = peak_position_;
  stats.peak_node = peak_position_ >= 0 ? order[peak_position_] : peak_node_;
  stats.weights_and_inputs_bytes = always_;
  const int32_t p = peak_position_;
  for (size_t v = 0; v < alloc_.size(); ++v) {
    const bool live = alloc_[v] == kAlways || (p >= 0 && alloc_[v] >= 0 && alloc_[v] <= p && release_[v] >= p);
    if (live) stats.live_at_peak.push_back(graph.values[v].name);
  }
  std::sort(stats.live_at_peak.begin(), stats.live_at_peak.end());
  return stats;
}

}  // namespace memopt
