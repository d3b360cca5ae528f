// One run's arena (exec/arena_plan.h): a buffer of the plan's size, and the slots of the node that
// runs now offered to the tensors its kernel allocates.
//
// Around each kernel the executor opens an Offer: while it is open, a tensor allocated on this
// thread, outside a ParallelFor, with exactly the byte size of one of the node's unclaimed output
// slots takes that slot (zero-filled, or as it is / 0xFF-poisoned for Tensor::Uninitialized, as
// the buffer pool fills its buffers); every other tensor comes from the buffer pool. The tensor's
// buffer shares the arena's ownership, so outputs handed back to the caller keep it alive.
//
// After the kernel, Settle checks each output: in its own slot, kept; a view of an arena value
// (Reshape, Identity: the buffer of an input) or a buffer in another output's slot, kept only
// while nothing is written over that slot before the output is released (ArenaPlan::next_write),
// else copied into the output's own slot when free, or to the pool. A slot a temporary claimed
// holds nothing after the kernel, so an output of the slot's size that went to the pool is
// moved into it. Nothing in the arena outlives its slot, and the memory tracker's counts, which
// follow tensor bytes, do not change.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "exec/arena_plan.h"
#include "exec/arena_slots.h"
#include "exec/kernel.h"

namespace memopt {

class ArenaAllocator {
 public:
  /// The arena buffer comes from the buffer pool (its cache keeps it between runs); throws
  /// std::bad_alloc as the pool does.
  explicit ArenaAllocator(std::shared_ptr<const ArenaPlan> plan);

  /// Offers the output slots of `node` (a node of the plan's order) on this thread until it ends
  /// (destruction or End()); with a null `arena`, none (a run without an arena inside a kernel
  /// of one with an arena). Offers nest.
  class Offer {
   public:
    Offer(ArenaAllocator* arena, const Node& node);
    ~Offer() { End(); }
    Offer(const Offer&) = delete;
    Offer& operator=(const Offer&) = delete;
    void End();

   private:
    ArenaAllocator* previous_;
    bool open_ = true;
  };

  /// After the kernel of `node` (its offer ended): each output settled as above.
  void Settle(const Node& node, KernelContext& ctx);

  const ArenaUse& use() const { return slots_.use(); }

  /// For Tensor's allocation: a slot of exactly `bytes` offered on this thread, filled as asked;
  /// nullptr when none.
  static std::shared_ptr<std::byte[]> Claim(size_t bytes, bool zero);

 private:
  std::shared_ptr<std::byte[]> SlotBuffer(ValueId v) const;
  int64_t OffsetOf(const Tensor& t) const;  ///< the buffer's offset in the arena, or -1 outside it

  ArenaSlots slots_;  ///< offers, claims and the settling decisions (exec/arena_slots.h)
  std::shared_ptr<std::byte[]> buffer_;
};

}  // namespace memopt
