// The device memory of one CUDA run: a CachingPool (caching_pool.h) over cudaMalloc/cudaFree,
// plus the stream every kernel of the run is enqueued on. Blocks freed by the pool are reused by
// later kernels on the same stream without synchronising (stream order makes that safe).
// cudaMemGetInfo is sampled when the pool is created and on request, as a cross-check of the
// pool's own reserved-bytes accounting (other processes and the CUDA context also use memory).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "caching_pool.h"
#include "device_arena.h"
#include "util/status.h"

namespace memopt::cuda {

/// "what failed: cudaErrorMemoryAllocation (out of memory)" as an internal error, or Ok.
Status CudaStatus(cudaError_t err, const char* what);

class DevicePool {
 public:
  /// Creates the stream and the pool on the current device (ProbeDevice selects it); kNoDevice
  /// when the device cannot be used at all.
  static Expected<std::shared_ptr<DevicePool>> Create();
  ~DevicePool();
  DevicePool(const DevicePool&) = delete;
  DevicePool& operator=(const DevicePool&) = delete;

  /// A block of at least `bytes`: the offered slot of exactly that size when the running node
  /// offers one (OfferSlots), else the caching pool's; kInvalidInput "out of GPU memory" when
  /// cudaMalloc fails even after the cache was released.
  Expected<void*> Allocate(size_t bytes);
  /// Returns a block to the cache (stream-ordered reuse), or an arena slot to the arena. Unknown
  /// pointers are ignored.
  void Free(void* ptr);

  /// The runs that follow take their node outputs from an arena laid out by `plan`: the device
  /// memory of the current arena when it is large enough and none of its blocks is held (its slot
  /// state started afresh), else a new cudaMalloc; Ok or that cudaMalloc's out-of-memory error.
  /// ClearArena: no arena (one whose blocks are still held is kept until the pool goes).
  Status UseArena(std::shared_ptr<const ArenaPlan> plan);
  void ClearArena();
  /// The arena of this run, or nullptr.
  DeviceArena* arena() const { return arena_.get(); }
  /// Offers the output slots of `node` to Allocate until EndOffer (no-op without an arena).
  void OfferSlots(const Node& node);
  void EndOffer() { offer_open_ = false; }
  /// A block of `bytes` for an output about to be copied there from the block it replaces: the
  /// arena slot at `slot_offset`, or (-1) the caching pool's. Its deleter returns it through
  /// `self` (this pool). The requested peak does not count it (the output's old block goes as
  /// soon as the copy is enqueued), so that it stays the live-bytes count the estimate predicts.
  Expected<std::shared_ptr<void>> ReplacementBlock(const std::shared_ptr<DevicePool>& self, size_t bytes,
                                                   int64_t slot_offset);

  cudaStream_t stream() const { return stream_; }
  /// The pool's and the arena's counts together: requested = bytes asked for and held (arena
  /// slots included), reserved = the pool's cudaMalloc'ed blocks plus the arena.
  PoolStats stats() const;
  void ResetPeaks();
  /// Gives cached blocks back to the device (live blocks stay).
  void ReleaseCached() { pool_.ReleaseCached(); }
  /// Waits for the stream and reports the first asynchronous error of its kernels.
  Status Synchronize();

  /// Device free bytes when the pool was created, and now (cudaMemGetInfo).
  uint64_t free_bytes_at_start() const { return free_at_start_; }
  Expected<uint64_t> FreeBytesNow() const;

 private:
  explicit DevicePool(cudaStream_t stream);

  /// Updates the combined peaks after a block was handed out (the requested one unless told not).
  void NotePeaks(bool requested = true);
  /// Device bytes held by the arena and any retired ones.
  int64_t ArenaBytes() const;

  cudaStream_t stream_ = nullptr;
  CachingPool pool_;
  uint64_t free_at_start_ = 0;
  std::shared_ptr<DeviceArena> arena_;
  /// Arenas replaced while blocks of theirs were live (freed with the pool).
  std::vector<std::shared_ptr<DeviceArena>> retired_;
  bool offer_open_ = false;
  std::unordered_multimap<void*, size_t> arena_live_;  ///< arena blocks handed out, by address
  int64_t arena_requested_ = 0;
  int64_t peak_requested_ = 0;
  int64_t peak_reserved_ = 0;
};

}  // namespace memopt::cuda
