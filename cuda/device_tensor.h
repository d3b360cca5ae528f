// A tensor in device memory: element type, concrete shape, and a pool block shared by the copies
// of the handle. The block goes back to its DevicePool when the last handle is dropped, so the
// executor frees a value simply by resetting its slot (as the CPU executor does with Tensor).
// Small integer tensors (shapes, axes, indices of shape arithmetic) also keep a host mirror, so
// the kernels that need their values (Reshape's shape, Slice's starts, ...) read them without a
// device round trip, and the shape subgraphs run on the host (cuda_executor.cc).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "device_pool.h"
#include "exec/tensor.h"
#include "ir/dtype.h"

namespace memopt::cuda {

class DeviceTensor {
 public:
  DeviceTensor() = default;

  /// An uninitialised tensor from `pool` (kernels write every element).
  static Expected<DeviceTensor> Empty(const std::shared_ptr<DevicePool>& pool, DataType dtype,
                                      std::vector<int64_t> shape);
  /// Copies a CPU tensor to the device (asynchronously on the pool's stream; the CPU buffer is
  /// pageable, so the copy has finished reading it when the call returns).
  static Expected<DeviceTensor> Upload(const std::shared_ptr<DevicePool>& pool, const Tensor& host);
  /// Copies back to a new CPU tensor (waits for the pool's stream).
  Expected<Tensor> Download() const;

  /// Integer/bool tensors of at most this many elements, and scalars of any type, keep a host
  /// mirror when uploaded.
  static constexpr int64_t kMirrorMaxElements = 4096;
  static bool Mirrorable(DataType dtype, int64_t numel);

  /// Same block, new shape (numel must match): Reshape, Squeeze, Identity, ... copy nothing.
  /// The mirror, if any, is reshaped too.
  DeviceTensor Reshaped(std::vector<int64_t> shape) const;
  /// The host copy of a small integer tensor (nullptr when none is kept).
  const Tensor* host_mirror() const { return mirror_.get(); }
  /// The elements as int64: from the mirror, else by a (synchronising) download. For the
  /// small shape-like inputs of Reshape, Slice, Split, ...
  Expected<std::vector<int64_t>> ToInt64Vector() const;

  DataType dtype() const { return dtype_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  /// Type and shape without data (Tensor::Meta): for the CPU-side decodes and shape-only kernels.
  Tensor Meta() const { return Tensor::Meta(dtype_, shape_); }
  int64_t rank() const { return static_cast<int64_t>(shape_.size()); }
  int64_t dim(int64_t i) const { return shape_[i]; }
  int64_t numel() const { return numel_; }
  int64_t bytes() const { return numel_ * ElemByteSize(dtype_); }
  bool defined() const { return dtype_ != DataType::kUndefined; }

  void* raw() const { return block_.get(); }
  /// The block this handle shares (its deleter returns it to the pool or the arena).
  const std::shared_ptr<void>& block() const { return block_; }
  /// The same tensor (type, shape, host mirror) on another block of at least its bytes: where an
  /// output was copied (cuda/device_arena.h).
  DeviceTensor WithBlock(std::shared_ptr<void> block) const {
    DeviceTensor t = *this;
    t.block_ = std::move(block);
    return t;
  }
  template <typename T>
  T* data() const { return static_cast<T*>(raw()); }

  /// "float[2, 3] on GPU"
  std::string Describe() const;

 private:
  DataType dtype_ = DataType::kUndefined;
  std::vector<int64_t> shape_;
  int64_t numel_ = 0;
  std::shared_ptr<void> block_;  ///< deleter returns the block to the pool
  std::shared_ptr<const Tensor> mirror_;  ///< host copy of a small integer tensor, or nullptr
};

}  // namespace memopt::cuda
