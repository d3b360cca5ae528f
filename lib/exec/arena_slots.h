// The bookkeeping of a run's arena that the CPU executor (exec/arena_allocator.h) and the CUDA
// executor (cuda/device_arena.h) share: which output slots the running node offers, which slot a
// new buffer of a given size takes, and, after the kernel, where each output's bytes may stay.
// Buffers are seen as byte ranges of the arena (or as outside it), so it knows no tensor type and
// no device.
//
// After a kernel each output is settled in order:
//   - kept where it is: in its own slot, or a view of an arena value (an input's data, another
//     output's slot) whose bytes stay unwritten until the output is released
//     (ArenaPlan::next_write);
//   - moved into its own slot when that slot is free (no other output of the node lies in it) and
//     the output is not a view of a buffer outside the arena: its bytes are copied there;
//   - copied out of the arena, when it lies in the arena where it would be overwritten and its own
//     slot cannot take it;
//   - left alone outside the arena (the pool's buffer, or a view of a weight).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "exec/arena_plan.h"
#include "ir/graph.h"

namespace memopt {

/// What a run's arena held (RunResult::arena).
struct ArenaUse {
  int64_t arena_bytes = 0;   ///< the arena's size; 0 when the run did not use one
  int64_t in_slot = 0;       ///< outputs a kernel wrote straight into their slot
  int64_t views_kept = 0;    ///< outputs sharing another value's buffer (an arena value's for their whole life)
  int64_t moved = 0;         ///< outputs copied into their own slot after the kernel
  int64_t outside = 0;       ///< outputs with a slot left in the pool (size not as planned, or slot taken)
};

/// Whether `p` lies in the buffer of one of `inputs` (null entries skipped): an output that is a
/// view of an input. T is Tensor or the CUDA executor's DeviceTensor (raw(), bytes()).
template <typename T>
bool LiesInAny(const void* p, const std::vector<const T*>& inputs) {
  const auto* b = static_cast<const std::byte*>(p);
  for (const T* in : inputs) {
    if (in == nullptr || in->raw() == nullptr) continue;
    const auto* q = static_cast<const std::byte*>(in->raw());
    if (b >= q && b < q + in->bytes()) return true;
  }
  return false;
}

class ArenaSlots {
 public:
  explicit ArenaSlots(std::shared_ptr<const ArenaPlan> plan);

  const ArenaPlan& plan() const { return *plan_; }
  const std::shared_ptr<const ArenaPlan>& plan_ptr() const { return plan_; }

  /// Offers the output slots of `node` (a node of the plan's order), none claimed yet.
  void Offer(const Node& node);
  /// The offset of an offered, unclaimed slot of exactly `bytes`, now claimed; -1 when none.
  int64_t Claim(int64_t bytes);

  /// One output after the kernel: where its bytes are.
  struct Output {
    bool present = false;     ///< a buffer of at least one byte (else nothing is decided)
    int64_t offset = -1;      ///< its first byte's offset in the arena; -1 outside it
    int64_t bytes = 0;
    bool input_view = false;  ///< (outside the arena) it lies in an input's buffer
  };
  enum class Placement { kKeep, kMoveToSlot, kCopyOut, kOutside };

  /// Settles output j of `node` (outputs in order; `outputs` describes every output of the node
  /// as it is now) and updates outputs[j] to where it ends up: its slot's offset after a move, -1
  /// after a copy out. The caller copies the bytes.
  Placement SettleOutput(const Node& node, std::vector<Output>& outputs, size_t j);

  const ArenaUse& use() const { return use_; }

 private:
  /// The arena value whose slot holds output j without being written over before the output is
  /// released, or kNone.
  ValueId SafeHolder(const Node& node, const std::vector<Output>& outputs, size_t j) const;
  /// No other output of the node has its buffer in value v's slot.
  bool SlotFree(ValueId v, const Node& node, const std::vector<Output>& outputs, size_t j) const;

  struct Slot {
    ValueId value;
    bool claimed = false;
  };
  std::shared_ptr<const ArenaPlan> plan_;
  /// Per value id: the arena value whose slot holds its data (itself, or the value a view shares),
  /// or kNone when its data is not in the arena.
  std::vector<ValueId> holder_;
  std::vector<Slot> slots_;  ///< the current node's output slots
  ArenaUse use_;
};

}  // namespace memopt
