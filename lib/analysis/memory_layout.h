// Offsets of a training step's tensors in one arena, planned ahead of time from the schedule.
//
// Once the dims are bound every value's size and lifetime along the execution order are known
// (analysis/peak_estimate.h: ValueLiveRanges), so memory can be laid out before the step runs, as
// ONNX Runtime's memory patterns, XLA's buffer assignment and TFLite's arena planner do. The live
// bytes the peak estimate reports are a lower bound on what the device must hold; the arena's size
// (the footprint) is what a static allocator really needs: sizes rounded up to the alignment, and
// the holes between values that no later value fits.
//
// Values in the arena: those a node of the order produces, with a size (initializers and graph
// inputs are live for the whole step and held apart). Two values conflict when their lifetimes
// share a step: [alloc, release], both inclusive (a step's inputs are still live while its
// outputs are allocated).
//
// Placements, the smallest arena kept:
//   * best fit in order (online): the schedule replayed with a free list (the smallest free
//     block that fits, the arena's top extended otherwise); O(values log values);
//   * offline greedy placements, while values^2 stays under a work limit (a few thousand values):
//     values taken in one of four orders (largest first; by size x lifetime; by lifetime; by
//     breadth: the most crowded steps' values first), each placed beside the values already
//     placed whose lifetimes overlap its own, in the smallest gap that holds it (best fit) or the
//     lowest one (first fit); O(values x overlapping values) each;
//   * a local search over the best offline order (a value at the arena's top moved earlier in the
//     order, placed again, kept when no larger), under its own work limit, stopping at the lower
//     bound: the most aligned bytes live at one step.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/peak_estimate.h"

namespace memopt {

struct MemoryLayoutOptions {
  /// Offsets and sizes of values of at least this many bytes are multiples of it (the executors'
  /// vector alignment); smaller values (scalars, shapes, a few elements) are aligned to
  /// `small_alignment`, as malloc aligns them, so that they do not take a whole line each.
  int64_t alignment = 64;
  int64_t small_alignment = 16;
  /// The offline placements run while 3 x values^2 / 2 stays under this (a few thousand values,
  /// ~10 ms; past that, the order is long enough for best fit in order to leave few holes).
  int64_t max_offline_work = 20'000'000;
  /// The local search over the best offline order stops when the pairs its placements visit pass
  /// this (~20-40 ms), or at the lower bound (the most aligned bytes live at one step).
  int64_t max_search_work = 20'000'000;
};

struct MemoryLayout {
  static constexpr int64_t kNotInArena = -1;
  std::vector<int64_t> offset;  ///< per value id: byte offset in the arena, or kNotInArena
  int64_t arena_bytes = 0;      ///< the footprint: the highest offset + aligned size
  int64_t live_peak_bytes = 0;  ///< the most bytes of arena values live at one step (unaligned)
  int32_t values = 0;           ///< values placed in the arena
  std::string method;           ///< "best fit in order", or the offline order and fit ("greedy by size, best fit")
  /// arena_bytes / live_peak_bytes (1 when nothing is live).
  double Ratio() const {
    return live_peak_bytes > 0 ? static_cast<double>(arena_bytes) / static_cast<double>(live_peak_bytes) : 1.0;
  }
};

/// `ranges` over an order of `steps` steps (ComputeValueLiveRanges).
MemoryLayout PlanMemoryLayout(const ValueLiveRanges& ranges, int32_t steps, const MemoryLayoutOptions& options = {});

/// True when no two arena values whose lifetimes overlap share a byte (for tests and checks).
bool LayoutIsValid(const ValueLiveRanges& ranges, const MemoryLayout& layout, const MemoryLayoutOptions& options = {});

}  // namespace memopt
