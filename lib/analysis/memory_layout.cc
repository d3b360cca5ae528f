#include "analysis/memory_layout.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <map>
#include <set>
#include <string>
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

/// Where a value goes among the gaps its placed, time-overlapping values leave.
enum class Fit { kBest, kFirst };  ///< the smallest gap that holds it / the lowest one

/// The offline orders a placement takes values in; a name for each.
std::vector<std::pair<std::string, std::vector<size_t>>> OfflineOrders(const std::vector<Item>& items, int32_t steps) {
  std::vector<std::pair<std::string, std::vector<size_t>>> orders;
  std::vector<size_t> ids(items.size());
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = i;
  // Larger key first; ties: larger, earlier, lower id (deterministic).
  auto by = [&](const char* name, auto key) {
    std::vector<size_t> order = ids;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      const double ka = key(items[a]), kb = key(items[b]);
      if (ka != kb) return ka > kb;
      if (items[a].size != items[b].size) return items[a].size > items[b].size;
      if (items[a].begin != items[b].begin) return items[a].begin < items[b].begin;
      return items[a].value < items[b].value;
    });
    orders.emplace_back(name, std::move(order));
  };
  auto length = [](const Item& it) { return static_cast<double>(it.end - it.begin + 1); };
  by("size", [](const Item& it) { return static_cast<double>(it.size); });
  by("size x lifetime", [&](const Item& it) { return static_cast<double>(it.size) * length(it); });
  by("lifetime", length);
  // By breadth: the steps with the most bytes live first; at each, the values live there that no
  // earlier step placed, largest first (the crowded steps are laid out before the free ones).
  std::vector<int64_t> live(static_cast<size_t>(steps) + 1, 0);
  for (const Item& it : items) {
    live[static_cast<size_t>(it.begin)] += it.size;
    if (it.end + 1 <= steps) live[static_cast<size_t>(it.end) + 1] -= it.size;
  }
  for (size_t t = 1; t < live.size(); ++t) live[t] += live[t - 1];
  std::vector<int32_t> crowded(live.size());
  for (size_t t = 0; t < crowded.size(); ++t) crowded[t] = static_cast<int32_t>(t);
  std::stable_sort(crowded.begin(), crowded.end(), [&](int32_t a, int32_t b) { return live[a] > live[b]; });
  std::vector<size_t> by_size = orders.front().second;
  std::vector<size_t> order;
  std::vector<char> taken(items.size(), 0);
  for (int32_t t : crowded) {
    if (order.size() == items.size()) break;
    for (size_t i : by_size) {
      if (!taken[i] && items[i].begin <= t && items[i].end >= t) {
        taken[i] = 1;
        order.push_back(i);
      }
    }
  }
  orders.emplace_back("breadth", std::move(order));
  return orders;
}

/// Values in `order`, each at the gap `fit` picks among the placed values it overlaps in time.
/// `work` counts the pairs visited.
std::vector<int64_t> GreedyPlacement(const std::vector<Item>& items, const std::vector<size_t>& order, Fit fit,
                                     int64_t& arena, int64_t& work) {
  std::vector<int64_t> offset(items.size(), MemoryLayout::kNotInArena);
  std::vector<size_t> placed;  // ascending offset
  arena = 0;
  for (size_t i : order) {
    const Item& item = items[i];
    int64_t prev_end = 0, best = -1, best_gap = INT64_MAX;
    work += static_cast<int64_t>(placed.size());
    for (size_t j : placed) {
      const Item& other = items[j];
      if (other.end < item.begin || other.begin > item.end) continue;  // no shared step
      const int64_t start = AlignUp(prev_end, item.align);
      const int64_t gap = offset[j] - start;
      if (gap >= item.size && gap < best_gap) {
        best_gap = gap;
        best = start;
        if (fit == Fit::kFirst) break;
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

/// Local search over the best offline placement's order ("squeaky wheel"): a value that ends at
/// the arena's top moves to an earlier place in the order (the place drawn from a fixed-seed
/// generator: deterministic), and the order is placed again; an arena no larger is kept (equal
/// ones too, to cross plateaus). Stops at `lower_bound` (the most aligned bytes live at one step:
/// no layout is smaller) or when the visited pairs pass `max_work`.
int64_t SearchPlacement(const std::vector<Item>& items, std::vector<size_t>& order, Fit fit, int64_t lower_bound,
                        int64_t max_work, std::vector<int64_t>& offset, int64_t arena) {
  uint64_t state = 0x9E3779B97F4A7C15ull;
  auto next = [&state]() {  // splitmix64
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  };
  std::vector<size_t> position(items.size()), top;
  int64_t work = 0;
  while (arena > lower_bound && work < max_work) {
    top.clear();
    for (size_t i = 0; i < items.size(); ++i) {
      if (offset[i] + items[i].size == arena) top.push_back(i);
    }
    for (size_t k = 0; k < order.size(); ++k) position[order[k]] = k;
    const size_t victim = top[next() % top.size()];
    const size_t from = position[victim];
    if (from == 0) {  // already first: nothing to move it before
      if (top.size() == 1) break;
      continue;
    }
    const size_t to = static_cast<size_t>(next() % from);
    std::vector<size_t> candidate = order;
    candidate.erase(candidate.begin() + static_cast<std::ptrdiff_t>(from));
    candidate.insert(candidate.begin() + static_cast<std::ptrdiff_t>(to), victim);
    int64_t candidate_arena = 0;
    std::vector<int64_t> placed = GreedyPlacement(items, candidate, fit, candidate_arena, work);
    if (candidate_arena <= arena) {
      arena = candidate_arena;
      order = std::move(candidate);
      offset = std::move(placed);
    }
  }
  return arena;
}

}  // namespace

MemoryLayout PlanMemoryLayout(const ValueLiveRanges& ranges, int32_t steps, const MemoryLayoutOptions& options) {
  MemoryLayout layout;
  const std::vector<Item> items = ArenaItems(ranges, steps, options);
  layout.offset.assign(ranges.alloc.size(), MemoryLayout::kNotInArena);
  layout.values = static_cast<int32_t>(items.size());
  int64_t lower_bound = 0;  // the most aligned bytes live at one step
  {
    std::vector<int64_t> diff(static_cast<size_t>(steps) + 2, 0), aligned(diff.size(), 0);
    for (const Item& it : items) {
      diff[static_cast<size_t>(it.begin)] += ranges.size[it.value];
      diff[static_cast<size_t>(it.end) + 1] -= ranges.size[it.value];
      aligned[static_cast<size_t>(it.begin)] += it.size;
      aligned[static_cast<size_t>(it.end) + 1] -= it.size;
    }
    int64_t live = 0, live_aligned = 0;
    for (size_t t = 0; t < diff.size(); ++t) {
      layout.live_peak_bytes = std::max(layout.live_peak_bytes, live += diff[t]);
      lower_bound = std::max(lower_bound, live_aligned += aligned[t]);
    }
  }
  int64_t online_arena = 0;
  std::vector<int64_t> offsets = BestFitInOrder(items, online_arena);
  layout.arena_bytes = online_arena;
  layout.method = "best fit in order";
  const int64_t n = static_cast<int64_t>(items.size());
  if (layout.arena_bytes > lower_bound && 3 * n * (n - 1) / 2 <= options.max_offline_work) {
    std::vector<size_t> best_order;
    Fit best_fit = Fit::kBest;
    int64_t work = 0;
    for (auto& [name, order] : OfflineOrders(items, steps)) {
      for (const Fit fit : {Fit::kBest, Fit::kFirst}) {
        int64_t arena = 0;
        std::vector<int64_t> offline = GreedyPlacement(items, order, fit, arena, work);
        if (arena < layout.arena_bytes) {
          offsets = std::move(offline);
          layout.arena_bytes = arena;
          layout.method = "greedy by " + name + (fit == Fit::kBest ? ", best fit" : ", first fit");
          best_order = order;
          best_fit = fit;
        }
      }
    }
    if (!best_order.empty() && layout.arena_bytes > lower_bound) {
      const int64_t before = layout.arena_bytes;
      layout.arena_bytes = SearchPlacement(items, best_order, best_fit, lower_bound, options.max_search_work, offsets,
                                           layout.arena_bytes);
      if (layout.arena_bytes < before) layout.method += ", searched";
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
