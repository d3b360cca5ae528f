#include "exec/arena_plan.h"

#include <algorithm>

#include "analysis/memory_layout.h"
#include "analysis/peak_estimate.h"

namespace memopt {

namespace {

/// Positions [0, n) holding step numbers: lower a range to at most x; the least over a range.
class MinTree {
 public:
  explicit MinTree(size_t n) : n_(n), min_(4 * n + 4, ArenaPlan::kNoWrite), tag_(min_) {}
  void Lower(size_t l, size_t r, int32_t x) { Lower(1, 0, n_, l, r, x); }
  int32_t Min(size_t l, size_t r) const { return Min(1, 0, n_, l, r); }

 private:
  void Lower(size_t node, size_t lo, size_t hi, size_t l, size_t r, int32_t x) {
    if (r <= lo || hi <= l) return;
    min_[node] = std::min(min_[node], x);
    if (l <= lo && hi <= r) {
      tag_[node] = std::min(tag_[node], x);  // every position below
      return;
    }
    const size_t mid = (lo + hi) / 2;
    Lower(2 * node, lo, mid, l, r, x);
    Lower(2 * node + 1, mid, hi, l, r, x);
  }
  int32_t Min(size_t node, size_t lo, size_t hi, size_t l, size_t r) const {
    if (r <= lo || hi <= l) return ArenaPlan::kNoWrite;
    if (l <= lo && hi <= r) return min_[node];
    const size_t mid = (lo + hi) / 2;
    return std::min({tag_[node], Min(2 * node, lo, mid, l, r), Min(2 * node + 1, mid, hi, l, r)});
  }

  size_t n_;
  std::vector<int32_t> min_, tag_;
};

/// ArenaPlan::next_write: values taken by decreasing release; before each, every value allocated
/// after that release has lowered the bytes of its slot to its allocation step (latest first).
std::vector<int32_t> NextWrites(const ArenaPlan& plan, const std::vector<int32_t>& alloc) {
  std::vector<ValueId> in_arena;
  std::vector<int64_t> bounds;
  for (size_t v = 0; v < plan.offset.size(); ++v) {
    if (plan.offset[v] == ArenaPlan::kNotInArena) continue;
    in_arena.push_back(static_cast<ValueId>(v));
    bounds.push_back(plan.offset[v]);
    bounds.push_back(plan.offset[v] + plan.size[v]);
  }
  std::sort(bounds.begin(), bounds.end());
  bounds.erase(std::unique(bounds.begin(), bounds.end()), bounds.end());
  auto index = [&](int64_t x) { return static_cast<size_t>(std::lower_bound(bounds.begin(), bounds.end(), x) - bounds.begin()); };

  std::vector<ValueId> by_alloc = in_arena, by_release = in_arena;
  std::sort(by_alloc.begin(), by_alloc.end(), [&](ValueId a, ValueId b) { return alloc[a] > alloc[b]; });
  std::sort(by_release.begin(), by_release.end(),
            [&](ValueId a, ValueId b) { return plan.release[a] > plan.release[b]; });
  MinTree tree(bounds.size());
  std::vector<int32_t> next(plan.offset.size(), ArenaPlan::kNoWrite);
  size_t w = 0;
  for (ValueId u : by_release) {
    for (; w < by_alloc.size() && alloc[by_alloc[w]] > plan.release[u]; ++w) {
      const ValueId x = by_alloc[w];
      tree.Lower(index(plan.offset[x]), index(plan.offset[x] + plan.size[x]), alloc[x]);
    }
    next[u] = tree.Min(index(plan.offset[u]), index(plan.offset[u] + plan.size[u]));
  }
  return next;
}

}  // namespace

Expected<ArenaPlan> PlanArena(const Graph& graph, const ExecutionOrder& order, const DimBindings& dims) {
  const ValueLiveRanges ranges = ComputeValueLiveRanges(graph, order, dims);
  if (!ranges.unbound_dims.empty()) {
    std::string names;
    for (const std::string& name : ranges.unbound_dims) names += (names.empty() ? "" : ", ") + name;
    return InvalidInput("no arena: dims not bound by the inputs (" + names + ")");
  }
  if (ranges.unsized_values > 0) {
    return InvalidInput("no arena: " + std::to_string(ranges.unsized_values) + " values of unknown size (e.g. '" +
                        graph.value(ranges.unsized.front()).name + "')");
  }
  const int32_t steps = static_cast<int32_t>(order.order.size());
  const MemoryLayout layout = PlanMemoryLayout(ranges, steps);
  if (layout.values == 0) return InvalidInput("no arena: the order produces no value with a size");

  ArenaPlan plan;
  plan.order = order.order;
  plan.offset = layout.offset;
  plan.size.assign(graph.values.size(), 0);
  plan.release = ranges.release;
  for (size_t v = 0; v < plan.offset.size(); ++v) {
    if (plan.offset[v] != ArenaPlan::kNotInArena) plan.size[v] = ranges.size[v];
  }
  plan.arena_bytes = layout.arena_bytes;
  plan.values = layout.values;
  plan.method = layout.method;
  plan.next_write = NextWrites(plan, ranges.alloc);
  return plan;
}

}  // namespace memopt
