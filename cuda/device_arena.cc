#include "device_arena.h"

#include <cuda_runtime_api.h>

#include <string>
#include <vector>

#include "cuda_kernel.h"
#include "device_pool.h"

namespace memopt::cuda {

Expected<std::shared_ptr<DeviceArena>> DeviceArena::Create(std::shared_ptr<const ArenaPlan> plan) {
  void* ptr = nullptr;
  const size_t bytes = static_cast<size_t>(std::max<int64_t>(plan->arena_bytes, 1));
  if (cudaMalloc(&ptr, bytes) != cudaSuccess) {
    cudaGetLastError();  // clear it, as the pool does
    return InvalidInput("out of GPU memory allocating the step's arena of " + std::to_string(bytes) + " bytes");
  }
  return std::shared_ptr<DeviceArena>(
      new DeviceArena(std::move(plan), static_cast<std::byte*>(ptr), static_cast<int64_t>(bytes)));
}

DeviceArena::~DeviceArena() {
  // The pool that held it synchronised its stream before letting go of it.
  cudaFree(base_);
}

int64_t DeviceArena::OffsetOf(const void* p) const {
  const auto* b = static_cast<const std::byte*>(p);
  if (b == nullptr || b < base_ || b >= base_ + bytes()) return -1;
  return b - base_;
}

Status SettleOnDevice(DevicePool& pool, const std::shared_ptr<DevicePool>& pool_ref, const Node& node,
                      CudaKernelContext& ctx) {
  DeviceArena& arena = *pool.arena();
  std::vector<ArenaSlots::Output> outputs(node.outputs.size());
  for (size_t j = 0; j < outputs.size() && j < ctx.outputs.size(); ++j) {
    const DeviceTensor& out = ctx.outputs[j];
    if (node.outputs[j] == kNone || !out.defined() || out.bytes() == 0 || out.raw() == nullptr) continue;
    ArenaSlots::Output& o = outputs[j];
    o.present = true;
    o.offset = arena.OffsetOf(out.raw());
    o.bytes = out.bytes();
    o.input_view = o.offset < 0 && LiesInAny(out.raw(), ctx.inputs);
  }
  for (size_t j = 0; j < outputs.size() && j < ctx.outputs.size(); ++j) {
    const ArenaSlots::Placement placement = arena.slots().SettleOutput(node, outputs, j);
    if (placement != ArenaSlots::Placement::kMoveToSlot && placement != ArenaSlots::Placement::kCopyOut) continue;
    DeviceTensor& out = ctx.outputs[j];
    const size_t bytes = static_cast<size_t>(out.bytes());
    const int64_t slot = placement == ArenaSlots::Placement::kMoveToSlot ? arena.slots().plan().offset[node.outputs[j]]
                                                                          : -1;
    MEMOPT_ASSIGN_OR_RETURN(std::shared_ptr<void> block, pool.ReplacementBlock(pool_ref, bytes, slot));
    MEMOPT_RETURN_IF_ERROR(CudaStatus(
        cudaMemcpyAsync(block.get(), out.raw(), bytes, cudaMemcpyDeviceToDevice, pool.stream()),
        placement == ArenaSlots::Placement::kMoveToSlot ? "cudaMemcpyAsync (an output into its arena slot)"
                                                        : "cudaMemcpyAsync (an output out of the arena)"));
    out = out.WithBlock(std::move(block));
  }
  return Status::Ok();
}

}  // namespace memopt::cuda
