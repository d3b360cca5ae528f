#include "analysis/memory_layout.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <map>
#include <set>
#include <utility>

namespace memopt {
namespace {

struct Item {
  ValueId value;
  int32_t begin, end;  ///< steps, inclusive
  int64_t size;        ///< rounded up to `align`
  int64_t align;       ///< the offset's alignment
};

int64_t AlignUp(int64_t x, int64_t a) { return (x + a - 1) / a * a; }

std::vector<Item> ArenaItems(const ValueLiveRanges& r, int32_t steps, const MemoryLayoutOptions& options) {
  const int64_t large = std::max<int64_t>(1, options.alignment);
  const int64_t small = std::clamp<int64_t>(options.small_alignment, 1, large);
  std::vector<Item> items;
  for (size_t v = 0; v < r.alloc.size(); ++v) {
    if (r.alloc[v] < 0 || r.size[v] <= 0) continue;
    const int32_t end = std::max(r.alloc[v], std::min(r.release[v], steps));
    const int64_t align = r.size[v] < large ? small : large;
    items.push_back({static_cast<ValueId>(v), r.alloc[v], end, AlignUp(r.size[v], align), align});
  }
  return items;
}

/// The schedule replayed with a best-fit free list.
std::vector<int64_t> BestFitInOrder(const std::vector<Item>& items, int64_t& arena) {
  std::vector<size_t> by_begin(items.size()), by_end(items.size());
  for (size_t i = 0; i < items.size(); ++i) by_begin[i] = by_end[i] = i;
  // Within a step, larger values first (fewer holes); ties by value id: deterministic.
  std::sort(by_begin.begin(), by_begin.end(), [&](size_t a, size_t b) {
    if (items[a].begin != items[b].begin) return items[a].begin < items[b].begin;
    if (items[a].size != items[b].size) return items[a].size > items[b].size;
    return items[a].value < items[b].value;
  });
  std::sort(by_end.begin(), by_end.end(), [&](size_t a, size_t b) {
    return items[a].end != items[b].end ? items[a].end < items[b].end : items[a].value < items[b].value;
  });
  std::map<int64_t, int64_t> free_at;          // offset -> length, coalesced
  std::set<std::pair<int64_t, int64_t>> free_by_size;  // (length, offset)
  int64_t top = 0;
  arena = 0;
  auto remove_block = [&](std::map<int64_t, int64_t>::iterator it) {
    free_by_size.erase({it->second, it->first});
    return free_at.erase(it);
  };
  auto release = [&](int64_t off, int64_t len) {
    auto next = free_at.lower_bound(off);
    if (next != free_at.end() && next->first == off + len) {  // merge with the block after
      len += next->second;
      next = remove_block(next);
    }
    if (next != free_at.begin()) {  // merge with the block before
      auto prev = std::prev(next);
      if (prev->first + prev->second == off) {
        off = prev->first;
        len += prev->second;
        remove_block(prev);
      }
    }
    if (off + len == top) {  // the arena's top comes down
      top = off;
      return;
    }
    free_at.emplace(off, len);
    free_by_size.emplace(len, off);
  };
  auto add_free = [&](int64_t off, int64_t len) {  // a piece of a block that was free already
    if (len <= 0) return;
    free_at.emplace(off, len);
    free_by_size.emplace(len, off);
  };
  std::vector<int64_t> offset(items.size(), MemoryLayout::kNotInArena);
  size_t next_begin = 0, next_end = 0;
  while (next_begin < by_begin.size()) {
    const int32_t step = items[by_begin[next_begin]].begin;
    // Frees of earlier steps first (a value whose lifetime ended before this step).
    while (next_end < by_end.size() && items[by_end[next_end]].end < step) {
      const Item& it = items[by_end[next_end]];
      release(offset[by_end[next_end]], it.size);
      ++next_end;
    }
    for (; next_begin < by_begin.size() && items[by_begin[next_begin]].begin == step; ++next_begin) {
      const size_t i = by_begin[next_begin];
      const int64_t size = items[i].size, align = items[i].align;
      // The smallest free block that holds the value once its start is aligned (a few tries:
      // sizes are multiples of the small alignment, so padding is rare).
      auto fit = free_by_size.lower_bound({size, INT64_MIN});
      for (int tries = 0; fit != free_by_size.end() && tries < 16; ++fit, ++tries) {
        if (fit->first >= AlignUp(fit->second, align) - fit->second + size) break;
      }
      if (fit != free_by_size.end() && fit->first >= AlignUp(fit->second, align) - fit->second + size) {
        const auto [len, off] = *fit;
        remove_block(free_at.find(off));
        offset[i] = AlignUp(off, align);
        add_free(off, offset[i] - off);
        add_free(offset[i] + size, off + len - offset[i] - size);
      } else {
        offset[i] = AlignUp(top, align);
        add_free(top, offset[i] - top);
        top = offset[i] + size;
      }
      arena = std::max(arena, top);
    }
  }
  return offset;
}

/// The offline placement orders: the key a value is placed by, larger first.
enum class Priority { kSize, kArea, kLifetime };

/// Values in `priority` order, each at the best-fitting gap among the placed values it overlaps
/// in time.
std::vector<int64_t> GreedyPlacement(const std::vector<Item>& items, Priority priority, int64_t& arena) {
  std::vector<size_t> order(items.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  auto key = [&](const Item& it) -> double {
    const double length = static_cast<double>(it.end - it.begin + 1);
    switch (priority) {
      case Priority::kSize:
        return static_cast<double>(it.size);
      case Priority::kArea:
        return static_cast<double>(it.size) * length;
      case Priority::kLifetime:
        return length;
    }
    return 0;
  };
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const double ka = key(items[a]), kb = key(items[b]);
    if (ka != kb) return ka > kb;
    if (items[a].size != items[b].size) return items[a].size > items[b].size;
    if (items[a].begin != items[b].begin) return items[a].begin < items[b].begin;
    return items[a].value < items[b].value;
  });
  std::vector<int64_t> offset(items.size(), MemoryLayout::kNotInArena);
  std::vector<size_t> placed;  // ascending offset
  arena = 0;
  for (size_t i : order) {
    const Item& item = items[i];
    int64_t prev_end = 0, best = -1, best_gap = INT64_MAX;
    for (size_t j : placed) {
      const Item& other = items[j];
      if (other.end < item.begin || other.begin > item.end) continue;  // no shared step
      const int64_t start = AlignUp(prev_end, item.align);
      const int64_t gap = offset[j] - start;
      if (gap >= item.size && gap < best_gap) {
        best_gap = gap;
        best = start;
      }
      prev_end = std::max(prev_end, offset[j] + other.size);
    }
    offset[i] = best >= 0 ? best : AlignUp(prev_end, item.align);
    arena = std::max(arena, offset[i] + item.size);
    auto at = std::upper_bound(placed.begin(), placed.end(), offset[i],
                               [&](int64_t off, size_t j) { return off < offset[j]; });
    placed.insert(at, i);
  }
  return offset;
}

}  // namespace

MemoryLayout PlanMemoryLayout(const ValueLiveRanges& ranges, int32_t steps, const MemoryLayoutOptions& options) {
  MemoryLayout layout;
  const std::vector<Item> items = ArenaItems(ranges, steps, options);
  layout.offset.assign(ranges.alloc.size(), MemoryLayout::kNotInArena);
  layout.values = static_cast<int32_t>(items.size());
  {
    std::vector<int64_t> diff(static_cast<size_t>(steps) + 2, 0);
    for (const Item& it : items) {
      diff[static_cast<size_t>(it.begin)] += ranges.size[it.value];
      diff[static_cast<size_t>(it.end) + 1] -= ranges.size[it.value];
    }
    int64_t live = 0;
    for (int64_t d : diff) layout.live_peak_bytes = std::max(layout.live_peak_bytes, live += d);
  }
  int64_t online_arena = 0;
  std::vector<int64_t> offsets = BestFitInOrder(items, online_arena);
  layout.arena_bytes = online_arena;
  layout.method = "best fit in order";
  const int64_t n = static_cast<int64_t>(items.size());
  if (3 * n * (n - 1) / 2 <= options.max_offline_work) {
    const std::pair<Priority, const char*> priorities[] = {
        {Priority::kSize, "greedy by size"}, {Priority::kArea, "greedy by size x lifetime"},
        {Priority::kLifetime, "greedy by lifetime"}};
    for (const auto& [priority, name] : priorities) {
      int64_t offline_arena = 0;
      std::vector<int64_t> offline = GreedyPlacement(items, priority, offline_arena);
      if (offline_arena < layout.arena_bytes || (offline_arena == layout.arena_bytes && layout.method == "best fit in order")) {
        offsets = std::move(offline);
        layout.arena_bytes = offline_arena;
        layout.method = name;
      }
    }
  }
  for (size_t i = 0; i < items.size(); ++i) layout.offset[items[i].value] = offsets[i];
  return layout;
}

bool LayoutIsValid(const ValueLiveRanges& ranges, const MemoryLayout& layout, const MemoryLayoutOptions& options) {
  // Releases never pass the order's end, so no clamp is needed here.
  std::vector<Item> items = ArenaItems(ranges, INT32_MAX - 1, options);
  std::sort(items.begin(), items.end(), [](const Item& a, const Item& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.value < b.value;
  });
  std::vector<const Item*> active;
  for (const Item& it : items) {
    const int64_t off = layout.offset[it.value];
    if (off < 0 || off % it.align != 0 || off + it.size > layout.arena_bytes) return false;
    active.erase(std::remove_if(active.begin(), active.end(), [&](const Item* a) { return a->end < it.begin; }),
                 active.end());
    for (const Item* a : active) {
      const int64_t a_off = layout.offset[a->value];
      if (a_off < off + it.size && off < a_off + a->size) return false;
    }
    active.push_back(&it);
  }
  return true;
}

}  // namespace memopt
