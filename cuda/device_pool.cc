#include "device_pool.h"

#include <algorithm>
#include <string>

namespace memopt::cuda {

Status CudaStatus(cudaError_t err, const char* what) {
  if (err == cudaSuccess) return Status::Ok();
  return InternalError(std::string(what) + " failed: " + cudaGetErrorName(err) + " (" + cudaGetErrorString(err) +
                       ")");
}

DevicePool::DevicePool(cudaStream_t stream)
    : stream_(stream),
      pool_(
          [](size_t bytes) -> void* {
            void* ptr = nullptr;
            if (cudaMalloc(&ptr, bytes) != cudaSuccess) {
              cudaGetLastError();  // clear the recorded error so cudaGetLastError after kernels stays meaningful
              return nullptr;
            }
            return ptr;
          },
          [](void* ptr) { cudaFree(ptr); }) {}

Expected<std::shared_ptr<DevicePool>> DevicePool::Create() {
  size_t free_bytes = 0, total_bytes = 0;
  if (cudaError_t err = cudaMemGetInfo(&free_bytes, &total_bytes); err != cudaSuccess) {
    // The first call on the device: failing here means there is no usable GPU (exit 4).
    return Status(ErrorCode::kNoDevice, CudaStatus(err, "no usable GPU: cudaMemGetInfo").message());
  }
  cudaStream_t stream = nullptr;
  MEMOPT_RETURN_IF_ERROR(CudaStatus(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate"));
  std::shared_ptr<DevicePool> pool(new DevicePool(stream));
  pool->free_at_start_ = free_bytes;
  return pool;
}

DevicePool::~DevicePool() {
  // Kernels still queued may read live blocks: wait before cudaFree returns them.
  cudaStreamSynchronize(stream_);
  pool_.ReleaseAll();
  arena_.reset();
  retired_.clear();
  cudaStreamDestroy(stream_);
}

Expected<void*> DevicePool::Allocate(size_t bytes) {
  if (offer_open_ && arena_ != nullptr && bytes > 0) {
    const int64_t offset = arena_->slots().Claim(static_cast<int64_t>(bytes));
    if (offset >= 0) {
      void* ptr = arena_->base() + offset;
      arena_live_.emplace(ptr, bytes);
      arena_requested_ += static_cast<int64_t>(bytes);
      NotePeaks();
      return ptr;
    }
  }
  void* ptr = pool_.Allocate(bytes);
  if (ptr == nullptr) {
    return InvalidInput("out of GPU memory allocating " + std::to_string(bytes) + " bytes (" +
                        std::to_string(stats().reserved) + " bytes reserved by the pool and the arena)");
  }
  NotePeaks();
  return ptr;
}

void DevicePool::Free(void* ptr) {
  auto it = arena_live_.find(ptr);
  if (it != arena_live_.end()) {
    arena_requested_ -= static_cast<int64_t>(it->second);
    arena_live_.erase(it);
    return;
  }
  pool_.Free(ptr);
}

Status DevicePool::UseArena(std::shared_ptr<const ArenaPlan> plan) {
  offer_open_ = false;
  if (arena_ != nullptr && arena_live_.empty() && plan->arena_bytes <= arena_->bytes()) {
    arena_->Reset(std::move(plan));  // a new run over the same device memory: no holders, counts from zero
    return Status::Ok();
  }
  MEMOPT_RETURN_IF_ERROR(Synchronize());  // kernels still queued may use the old arena
  ClearArena();
  MEMOPT_ASSIGN_OR_RETURN(arena_, DeviceArena::Create(std::move(plan)));
  NotePeaks();
  return Status::Ok();
}

void DevicePool::ClearArena() {
  offer_open_ = false;
  if (arena_ == nullptr) return;
  if (!arena_live_.empty()) retired_.push_back(arena_);  // its blocks are still held
  arena_.reset();
}

void DevicePool::OfferSlots(const Node& node) {
  if (arena_ == nullptr) return;
  arena_->slots().Offer(node);
  offer_open_ = true;
}

Expected<std::shared_ptr<void>> DevicePool::ReplacementBlock(const std::shared_ptr<DevicePool>& self, size_t bytes,
                                                             int64_t slot_offset) {
  void* ptr = nullptr;
  if (slot_offset >= 0 && arena_ != nullptr) {
    ptr = arena_->base() + slot_offset;
    arena_live_.emplace(ptr, bytes);
    arena_requested_ += static_cast<int64_t>(bytes);
  } else {
    ptr = pool_.Allocate(bytes);
    if (ptr == nullptr) {
      return InvalidInput("out of GPU memory copying a " + std::to_string(bytes) + "-byte output out of the arena (" +
                          std::to_string(stats().reserved) + " bytes reserved by the pool and the arena)");
    }
  }
  NotePeaks(false);
  return std::shared_ptr<void>(ptr, [self](void* p) { self->Free(p); });
}

PoolStats DevicePool::stats() const {
  PoolStats s = pool_.stats();
  s.requested += arena_requested_;
  s.reserved += ArenaBytes();
  s.peak_requested = peak_requested_;
  s.peak_reserved = std::max(peak_reserved_, s.reserved);
  return s;
}

void DevicePool::NotePeaks(bool requested) {
  PoolStats s = pool_.stats();
  s.requested += arena_requested_;
  s.reserved += ArenaBytes();
  if (requested) peak_requested_ = std::max(peak_requested_, s.requested);
  peak_reserved_ = std::max(peak_reserved_, s.reserved);
}

int64_t DevicePool::ArenaBytes() const {
  int64_t bytes = arena_ != nullptr ? arena_->bytes() : 0;
  for (const auto& a : retired_) bytes += a->bytes();
  return bytes;
}

void DevicePool::ResetPeaks() {
  pool_.ResetPeaks();
  peak_requested_ = 0;
  peak_reserved_ = 0;
  NotePeaks();
}

Status DevicePool::Synchronize() { return CudaStatus(cudaStreamSynchronize(stream_), "cudaStreamSynchronize"); }

Expected<uint64_t> DevicePool::FreeBytesNow() const {
  size_t free_bytes = 0, total_bytes = 0;
  MEMOPT_RETURN_IF_ERROR(CudaStatus(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo"));
  return static_cast<uint64_t>(free_bytes);
}

}  // namespace memopt::cuda
