#include "device_pool.h"

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
  cudaStreamDestroy(stream_);
}

Expected<void*> DevicePool::Allocate(size_t bytes) {
  void* ptr = pool_.Allocate(bytes);
  if (ptr == nullptr) {
    return InvalidInput("out of GPU memory allocating " + std::to_string(bytes) + " bytes (" +
                        std::to_string(pool_.stats().reserved) + " bytes reserved by the pool)");
  }
  return ptr;
}

Status DevicePool::Synchronize() { return CudaStatus(cudaStreamSynchronize(stream_), "cudaStreamSynchronize"); }

Expected<uint64_t> DevicePool::FreeBytesNow() const {
  size_t free_bytes = 0, total_bytes = 0;
  MEMOPT_RETURN_IF_ERROR(CudaStatus(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo"));
  return static_cast<uint64_t>(free_bytes);
}

}  // namespace memopt::cuda
