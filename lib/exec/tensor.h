// A dense CPU tensor: element type, concrete shape and a shared, 64-byte aligned buffer.
// float16 and bfloat16 are stored as their 16-bit patterns (see exec/half.h) and computed in
// float32; bool is one byte (0/1); strings are kept in a separate vector.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ir/dtype.h"
#include "util/status.h"

namespace memopt {

class Tensor {
 public:
  Tensor() = default;
  /// Allocates a zero-filled tensor.
  Tensor(DataType dtype, std::vector<int64_t> shape);
  /// Type and shape without storage (raw() is nullptr): lets the CUDA backend run the CPU
  /// view and shape kernels (Reshape, Squeeze, Shape, ...) on a device tensor's metadata, so
  /// both backends share one set of shape rules. Only kernels that never touch the elements
  /// may see it.
  static Tensor Meta(DataType dtype, std::vector<int64_t> shape);
  /// A tensor whose elements are left as the buffer pool hands them out (see
  /// BufferPool::AcquireUninitialized), for a kernel that writes every element: it saves the
  /// zero-fill pass. String tensors come zeroed (empty strings) as always.
  static Tensor Uninitialized(DataType dtype, std::vector<int64_t> shape);
  /// Tensor(dtype, shape), or, when the memory cannot be allocated, an error naming `what` (e.g.
  /// "input 'x'") with the shape and the bytes it needs, instead of std::bad_alloc.
  static Expected<Tensor> Allocate(DataType dtype, std::vector<int64_t> shape, const std::string& what);

  DataType dtype() const { return dtype_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  int64_t rank() const { return static_cast<int64_t>(shape_.size()); }
  int64_t dim(int64_t i) const { return shape_[i]; }
  int64_t numel() const { return numel_; }
  /// numel * element bytes (the quantity memory accounting counts).
  int64_t bytes() const;
  bool defined() const { return dtype_ != DataType::kUndefined; }

  void* raw() { return buffer_.get(); }
  const void* raw() const { return buffer_.get(); }
  template <typename T>
  T* data() { return static_cast<T*>(raw()); }
  template <typename T>
  const T* data() const { return static_cast<const T*>(raw()); }

  std::vector<std::string>& strings() { return strings_; }
  const std::vector<std::string>& strings() const { return strings_; }

  /// Same buffer, new shape (numel must match). Used by Reshape/Squeeze/... without copying.
  Tensor Reshaped(std::vector<int64_t> shape) const;
  /// Deep copy.
  Tensor Clone() const;
  /// The same elements in `buffer` (at least bytes() long and 64-byte aligned, e.g. a slot of
  /// the executor's arena), which the new tensor holds. Not for string tensors. `copy` moves
  /// the bytes (memmove when empty; the arena passes one that splits a large copy over threads).
  Tensor CopyInto(std::shared_ptr<std::byte[]> buffer,
                  void (*copy)(void* dst, const void* src, size_t bytes) = nullptr) const;
  /// Element i converted to double (any numeric type; float16/bfloat16 decoded).
  double GetAsDouble(int64_t i) const;
  /// Stores v into element i, converting (rounding half types, truncating ints as C++ casts).
  void SetFromDouble(int64_t i, double v);
  /// Elements as int64 (integer and bool tensors; float tensors are truncated).
  std::vector<int64_t> ToInt64Vector() const;

  /// "float[2, 3]"
  std::string Describe() const;

 private:
  enum class Fill { kZero, kNone };
  Tensor(DataType dtype, std::vector<int64_t> shape, Fill fill);

  DataType dtype_ = DataType::kUndefined;
  std::vector<int64_t> shape_;
  int64_t numel_ = 0;
  std::shared_ptr<std::byte[]> buffer_;
  std::vector<std::string> strings_;
};

/// Row-major strides of `shape` (in elements).
std::vector<int64_t> Strides(const std::vector<int64_t>& shape);
int64_t NumElements(const std::vector<int64_t>& shape);

/// The error for a tensor that cannot be allocated: "<what> [shape] (dtype) needs N bytes, ...".
Status OutOfMemoryError(const std::string& what, DataType dtype, const std::vector<int64_t>& shape);

}  // namespace memopt
