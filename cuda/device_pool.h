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

#include "caching_pool.h"
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

  /// A block of at least `bytes`; kInvalidInput "out of GPU memory" when cudaMalloc fails even
  /// after the cache was released.
  Expected<void*> Allocate(size_t bytes);
  /// Returns a block to the cache (stream-ordered reuse). Unknown pointers are ignored.
  void Free(void* ptr) { pool_.Free(ptr); }

  cudaStream_t stream() const { return stream_; }
  const PoolStats& stats() const { return pool_.stats(); }
  void ResetPeaks() { pool_.ResetPeaks(); }
  /// Gives cached blocks back to the device (live blocks stay).
  void ReleaseCached() { pool_.ReleaseCached(); }
  /// Waits for the stream and reports the first asynchronous error of its kernels.
  Status Synchronize();

  /// Device free bytes when the pool was created, and now (cudaMemGetInfo).
  uint64_t free_bytes_at_start() const { return free_at_start_; }
  Expected<uint64_t> FreeBytesNow() const;

 private:
  explicit DevicePool(cudaStream_t stream);

  cudaStream_t stream_ = nullptr;
  CachingPool pool_;
  uint64_t free_at_start_ = 0;
};

}  // namespace memopt::cuda
