// Where the CPU executor puts a step's activations: one arena laid out ahead of time
// (analysis/memory_layout.h) from the run's order and the dims bound by its inputs, the layout
// whose size `scan` and `bench` report as the footprint.
//
// An arena value's slot is free at the steps its lifetime [alloc, release] does not cover, so data
// left in a slot after its value is released (a view the value's consumer made: Reshape, Identity,
// the YieldOp's outputs) stays intact only until the next value whose slot overlaps it is
// allocated. `next_write` says when that is, so the executor keeps such a view only when it is
// released before, and copies it into its own slot otherwise (exec/arena_allocator.h).
#pragma once

#include <climits>
#include <cstdint>
#include <string>
#include <vector>

#include "analysis/exec_order.h"
#include "ir/graph.h"
#include "sym/sym_expr.h"
#include "util/status.h"

namespace memopt {

struct ArenaPlan {
  static constexpr int64_t kNotInArena = -1;
  static constexpr int32_t kNoWrite = INT32_MAX;
  std::vector<NodeId> order;     ///< the order the plan was made for (node ids)
  std::vector<int64_t> offset;   ///< per value id: byte offset of its slot, or kNotInArena
  std::vector<int64_t> size;     ///< per value id: the slot's bytes (the value's), 0 when not in the arena
  std::vector<int32_t> release;  ///< per value id: the step after which it is freed (order size: never)
  /// Per arena value: the first step after its release that allocates a value whose slot overlaps
  /// its own; kNoWrite when none does.
  std::vector<int32_t> next_write;
  int64_t arena_bytes = 0;
  int32_t values = 0;   ///< values with a slot
  std::string method;   ///< the layout's placement (MemoryLayout::method)

  /// True when bytes [begin, end) of the arena lie inside value `v`'s slot.
  bool InSlot(ValueId v, int64_t begin, int64_t end) const {
    return offset[v] != kNotInArena && begin >= offset[v] && end <= offset[v] + size[v];
  }
};

/// The arena of `order` at `dims` (ComputeValueLiveRanges + PlanMemoryLayout with the defaults
/// the peak estimate uses, so its arena_bytes is the footprint's arena). An error naming why when
/// it cannot be planned: a dim unbound, a value whose size is unknown, nothing to place.
Expected<ArenaPlan> PlanArena(const Graph& graph, const ExecutionOrder& order, const DimBindings& dims);

}  // namespace memopt
