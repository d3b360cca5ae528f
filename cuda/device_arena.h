// The CUDA executor's arena: one cudaMalloc of the planned layout's size (exec/arena_plan.h, the
// footprint `scan` reports), from which the running node's outputs take their slots, as the CPU
// executor's do (exec/arena_allocator.h). The caching pool (caching_pool.h) then holds only the
// weights, the inputs, kernel workspaces and the few outputs without a slot, so what the device
// reserves for a step is the arena plus those, not the pool's size-class rounding and cached
// blocks of every activation (issue 37: 1.72x the estimate at level 1 on the pool alone).
//
// DevicePool::Allocate takes a slot while the executor has the node's slots offered
// (DevicePool::OfferSlots): a block of exactly a slot's size, in the order the kernel asks. After
// the kernel, SettleOnDevice applies exec/arena_slots.h's decisions to the outputs: kept in their
// slot or as views of an arena value that stays unwritten for their life, else copied into their
// own slot, or out of the arena into the pool (device-to-device copies on the run's stream).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "exec/arena_slots.h"
#include "util/status.h"

namespace memopt::cuda {

class DevicePool;
struct CudaKernelContext;

class DeviceArena {
 public:
  /// cudaMalloc of plan->arena_bytes; an "out of GPU memory" error when it fails.
  static Expected<std::shared_ptr<DeviceArena>> Create(std::shared_ptr<const ArenaPlan> plan);
  /// Lays out `plan` (no larger than bytes()) over the same device memory, its slot state afresh.
  void Reset(std::shared_ptr<const ArenaPlan> plan) { slots_ = ArenaSlots(std::move(plan)); }
  ~DeviceArena();
  DeviceArena(const DeviceArena&) = delete;
  DeviceArena& operator=(const DeviceArena&) = delete;

  std::byte* base() const { return base_; }
  /// The device memory held (the largest plan it was created for).
  int64_t bytes() const { return capacity_; }
  /// The byte offset of `p` in the arena, or -1 outside it.
  int64_t OffsetOf(const void* p) const;
  ArenaSlots& slots() { return slots_; }
  const ArenaSlots& slots() const { return slots_; }

 private:
  DeviceArena(std::shared_ptr<const ArenaPlan> plan, std::byte* base, int64_t capacity)
      : slots_(std::move(plan)), base_(base), capacity_(capacity) {}
  ArenaSlots slots_;
  std::byte* base_ = nullptr;
  int64_t capacity_ = 0;
};

/// After the kernel of `node` (its offer ended): each output settled on `pool`'s arena
/// (exec/arena_slots.h), copying on the pool's stream where it moves into its slot or out of the
/// arena.
Status SettleOnDevice(DevicePool& pool, const std::shared_ptr<DevicePool>& pool_ref, const Node& node,
                      CudaKernelContext& ctx);

}  // namespace memopt::cuda
