#include "exec/tensor.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>

#include "exec/arena_allocator.h"
#include "exec/buffer_pool.h"
#include "util/half.h"
#include "util/bytes.h"
#include "util/status.h"

namespace memopt {

int64_t NumElements(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::vector<int64_t> Strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  int64_t s = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = s;
    s *= shape[i];
  }
  return strides;
}

Tensor::Tensor(DataType dtype, std::vector<int64_t> shape) : Tensor(dtype, std::move(shape), Fill::kZero) {}

Tensor Tensor::Uninitialized(DataType dtype, std::vector<int64_t> shape) {
  return Tensor(dtype, std::move(shape), Fill::kNone);
}

/// Buffers come from the slot of the executor's arena that the node running on this thread offers
/// for exactly this size (exec/arena_allocator.h), else from its size-class pool
/// (exec/buffer_pool.h). String tensors keep their elements in strings_ (empty strings) and get an
/// empty block.
Tensor::Tensor(DataType dtype, std::vector<int64_t> shape, Fill fill)
    : dtype_(dtype), shape_(std::move(shape)), numel_(NumElements(shape_)) {
  BufferPool& pool = BufferPool::Global();
  if (dtype_ == DataType::kString) {
    strings_.resize(static_cast<size_t>(numel_));
    buffer_ = pool.AcquireZeroed(0);
    return;
  }
  const int64_t bytes = numel_ * ElemByteSize(dtype_);
  const size_t size = static_cast<size_t>(bytes > 0 ? bytes : 0);
  buffer_ = ArenaAllocator::Claim(size, fill == Fill::kZero);
  if (buffer_ != nullptr) return;
  buffer_ = fill == Fill::kZero ? pool.AcquireZeroed(size) : pool.AcquireUninitialized(size);
}

Expected<Tensor> Tensor::Allocate(DataType dtype, std::vector<int64_t> shape, const std::string& what) {
  try {
    return Tensor(dtype, shape);
  } catch (const std::bad_alloc&) {
    return OutOfMemoryError(what, dtype, shape);
  }
}

Status OutOfMemoryError(const std::string& what, DataType dtype, const std::vector<int64_t>& shape) {
  const int64_t numel = NumElements(shape);
  const int64_t elem = ElemByteSize(dtype);
  std::string size = numel > 0 && elem > 0 && numel > INT64_MAX / elem ? std::string("more than 8 EiB")
                                                                         : HumanBytes(numel * elem);
  std::string dims;
  for (size_t i = 0; i < shape.size(); ++i) dims += (i ? ", " : "") + std::to_string(shape[i]);
  return InvalidInput(what + " [" + dims + "] (" + DataTypeName(dtype) + ") needs " + size +
                      ", more memory than this process can allocate");
}

Tensor Tensor::Meta(DataType dtype, std::vector<int64_t> shape) {
  Tensor t;
  t.dtype_ = dtype;
  t.numel_ = NumElements(shape);
  t.shape_ = std::move(shape);
  return t;
}

int64_t Tensor::bytes() const { return numel_ * ElemByteSize(dtype_); }

Tensor Tensor::Reshaped(std::vector<int64_t> shape) const {
  MEMOPT_CHECK(NumElements(shape) == numel_);
  Tensor t = *this;
  t.shape_ = std::move(shape);
  return t;
}

Tensor Tensor::Clone() const {
  Tensor t(dtype_, shape_);
  if (dtype_ == DataType::kString) {
    t.strings_ = strings_;
  } else if (bytes() > 0) {
    std::memcpy(t.raw(), raw(), static_cast<size_t>(bytes()));
  }
  return t;
}

Tensor Tensor::CopyInto(std::shared_ptr<std::byte[]> buffer, void (*copy)(void*, const void*, size_t)) const {
  MEMOPT_CHECK(dtype_ != DataType::kString);
  Tensor t = Meta(dtype_, shape_);
  if (bytes() > 0) {
    if (copy != nullptr) {
      copy(buffer.get(), raw(), static_cast<size_t>(bytes()));
    } else {
      std::memmove(buffer.get(), raw(), static_cast<size_t>(bytes()));
    }
  }
  t.buffer_ = std::move(buffer);
  return t;
}

double Tensor::GetAsDouble(int64_t i) const {
  const void* p = raw();
  switch (dtype_) {
    case DataType::kFloat: return static_cast<const float*>(p)[i];
    case DataType::kDouble: return static_cast<const double*>(p)[i];
    case DataType::kFloat16: return Float16ToFloat(static_cast<const uint16_t*>(p)[i]);
    case DataType::kBfloat16: return Bfloat16ToFloat(static_cast<const uint16_t*>(p)[i]);
    case DataType::kInt8: return static_cast<const int8_t*>(p)[i];
    case DataType::kUint8: return static_cast<const uint8_t*>(p)[i];
    case DataType::kInt16: return static_cast<const int16_t*>(p)[i];
    case DataType::kUint16: return static_cast<const uint16_t*>(p)[i];
    case DataType::kInt32: return static_cast<const int32_t*>(p)[i];
    case DataType::kUint32: return static_cast<const uint32_t*>(p)[i];
    case DataType::kInt64: return static_cast<double>(static_cast<const int64_t*>(p)[i]);
    case DataType::kUint64: return static_cast<double>(static_cast<const uint64_t*>(p)[i]);
    case DataType::kBool: return static_cast<const uint8_t*>(p)[i] != 0 ? 1.0 : 0.0;
    default: return std::nan("");
  }
}

namespace {
/// C++ float->int conversion is undefined out of range; clamp first (NaN -> 0).
template <typename T>
T ToInt(double v) {
  if (std::isnan(v)) return 0;
  constexpr double lo = static_cast<double>(std::numeric_limits<T>::lowest());
  constexpr double hi = static_cast<double>(std::numeric_limits<T>::max());
  if (v <= lo) return std::numeric_limits<T>::lowest();
  if (v >= hi) return std::numeric_limits<T>::max();
  return static_cast<T>(v);
}
}  // namespace

void Tensor::SetFromDouble(int64_t i, double v) {
  void* p = raw();
  switch (dtype_) {
    case DataType::kFloat: static_cast<float*>(p)[i] = static_cast<float>(v); break;
    case DataType::kDouble: static_cast<double*>(p)[i] = v; break;
    case DataType::kFloat16: static_cast<uint16_t*>(p)[i] = FloatToFloat16(static_cast<float>(v)); break;
    case DataType::kBfloat16: static_cast<uint16_t*>(p)[i] = FloatToBfloat16(static_cast<float>(v)); break;
    case DataType::kInt8: static_cast<int8_t*>(p)[i] = ToInt<int8_t>(v); break;
    case DataType::kUint8: static_cast<uint8_t*>(p)[i] = ToInt<uint8_t>(v); break;
    case DataType::kInt16: static_cast<int16_t*>(p)[i] = ToInt<int16_t>(v); break;
    case DataType::kUint16: static_cast<uint16_t*>(p)[i] = ToInt<uint16_t>(v); break;
    case DataType::kInt32: static_cast<int32_t*>(p)[i] = ToInt<int32_t>(v); break;
    case DataType::kUint32: static_cast<uint32_t*>(p)[i] = ToInt<uint32_t>(v); break;
    case DataType::kInt64: static_cast<int64_t*>(p)[i] = ToInt<int64_t>(v); break;
    case DataType::kUint64: static_cast<uint64_t*>(p)[i] = ToInt<uint64_t>(v); break;
    case DataType::kBool: static_cast<uint8_t*>(p)[i] = v != 0.0 ? 1 : 0; break;
    default: break;
  }
}

std::vector<int64_t> Tensor::ToInt64Vector() const {
  std::vector<int64_t> out(static_cast<size_t>(numel_));
  const void* p = raw();
  switch (dtype_) {
    case DataType::kInt64:
      // An empty vector's data() may be null, which memcpy must not get even for 0 bytes.
      if (!out.empty()) std::memcpy(out.data(), p, out.size() * sizeof(int64_t));
      break;
    case DataType::kUint64:
      for (int64_t i = 0; i < numel_; ++i) out[i] = static_cast<int64_t>(static_cast<const uint64_t*>(p)[i]);
      break;
    case DataType::kInt32:
      for (int64_t i = 0; i < numel_; ++i) out[i] = static_cast<const int32_t*>(p)[i];
      break;
    default:
      for (int64_t i = 0; i < numel_; ++i) out[i] = ToInt<int64_t>(GetAsDouble(i));
  }
  return out;
}

std::string Tensor::Describe() const {
  std::string s = DataTypeName(dtype_) + "[";
  for (size_t i = 0; i < shape_.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape_[i]);
  }
  return s + "]";
}

}  // namespace memopt
