#include "device_tensor.h"

namespace memopt::cuda {

Expected<DeviceTensor> DeviceTensor::Empty(const std::shared_ptr<DevicePool>& pool, DataType dtype,
                                           std::vector<int64_t> shape) {
  if (dtype == DataType::kString || ElemByteSize(dtype) <= 0 || dtype == DataType::kUint4 ||
      dtype == DataType::kInt4 || dtype == DataType::kFloat4E2M1) {
    return Unsupported("the CUDA backend does not hold " + DataTypeName(dtype) + " tensors");
  }
  DeviceTensor t;
  t.dtype_ = dtype;
  t.numel_ = NumElements(shape);
  t.shape_ = std::move(shape);
  MEMOPT_ASSIGN_OR_RETURN(void* ptr, pool->Allocate(static_cast<size_t>(t.bytes())));
  // The deleter keeps the pool alive for as long as any block of it is.
  t.block_ = std::shared_ptr<void>(ptr, [pool](void* p) { pool->Free(p); });
  return t;
}

Expected<DeviceTensor> DeviceTensor::Upload(const std::shared_ptr<DevicePool>& pool, const Tensor& host) {
  MEMOPT_ASSIGN_OR_RETURN(DeviceTensor t, Empty(pool, host.dtype(), host.shape()));
  if (t.bytes() > 0) {
    MEMOPT_RETURN_IF_ERROR(CudaStatus(
        cudaMemcpyAsync(t.raw(), host.raw(), static_cast<size_t>(t.bytes()), cudaMemcpyHostToDevice, pool->stream()),
        "cudaMemcpyAsync (upload)"));
    // Pageable source: the call returns once the data is staged, but make it explicit so the
    // caller may free `host` at once whatever the driver does.
    MEMOPT_RETURN_IF_ERROR(pool->Synchronize());
  }
  if (Mirrorable(host.dtype(), host.numel())) t.mirror_ = std::make_shared<const Tensor>(host.Clone());
  return t;
}

bool DeviceTensor::Mirrorable(DataType dtype, int64_t numel) {
  const bool integer = dtype == DataType::kInt64 || dtype == DataType::kInt32 || dtype == DataType::kBool ||
                       dtype == DataType::kUint8 || dtype == DataType::kInt8;
  // Float scalars too: a Dropout ratio or a loss scale is read on the host without a sync.
  return (integer && numel <= kMirrorMaxElements) || numel <= 1;
}

DeviceTensor DeviceTensor::Reshaped(std::vector<int64_t> shape) const {
  DeviceTensor t = *this;
  if (mirror_ != nullptr) t.mirror_ = std::make_shared<const Tensor>(mirror_->Reshaped(shape));
  t.shape_ = std::move(shape);
  return t;
}

Expected<std::vector<int64_t>> DeviceTensor::ToInt64Vector() const {
  if (mirror_ != nullptr) return mirror_->ToInt64Vector();
  MEMOPT_ASSIGN_OR_RETURN(Tensor host, Download());
  return host.ToInt64Vector();
}

Expected<Tensor> DeviceTensor::Download() const {
  Tensor host(dtype_, shape_);
  if (bytes() > 0) {
    // The pool's stream is non-blocking, so the legacy-stream cudaMemcpy would not wait for the
    // kernels that wrote this block: wait for the whole device first.
    MEMOPT_RETURN_IF_ERROR(CudaStatus(cudaDeviceSynchronize(), "cudaDeviceSynchronize (before download)"));
    MEMOPT_RETURN_IF_ERROR(
        CudaStatus(cudaMemcpy(host.raw(), raw(), static_cast<size_t>(bytes()), cudaMemcpyDeviceToHost),
                   "cudaMemcpy (download)"));
  }
  return host;
}

std::string DeviceTensor::Describe() const {
  std::string s = DataTypeName(dtype_) + "[";
  for (size_t i = 0; i < shape_.size(); ++i) s += (i ? ", " : "") + std::to_string(shape_[i]);
  return s + "] on GPU";
}

}  // namespace memopt::cuda
