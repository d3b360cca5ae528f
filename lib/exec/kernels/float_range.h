// A range of a tensor's elements as float or double compute values, and back.
//
// Kernels compute float16/bfloat16 tensors in float. Converting a whole tensor first holds a float
// copy of it, twice its size, outside the planned arena (a vocabulary's logits or embedding
// gradient: hundreds of MB); kernels that work row by row read and write one row (or block) at a
// time instead, into a small buffer. The 16-bit conversions to and from float are vectorised
// (exec/math/half_rows.h) and give util/half.h's bits.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "exec/kernels/kernel_util.h"
#include "exec/math/half_rows.h"
#include "exec/tensor.h"
#include "util/half.h"

namespace memopt {

/// Whether t's elements are C (a kernel may then read and write them in place).
template <typename C>
bool StoredAs(const Tensor& t) {
  return t.dtype() == (std::is_same_v<C, float> ? DataType::kFloat : DataType::kDouble);
}

/// out[i] = element base + i * stride of any numeric tensor as C (float16/bfloat16 decoded), for
/// i < n. Contiguous 16-bit elements to float take the vectorised conversion.
template <typename C>
void ConvertStrided(const Tensor& t, int64_t base, int64_t stride, int64_t n, C* out) {
  const auto each = [&](const auto* p, auto decode) {
    for (int64_t i = 0; i < n; ++i) out[i] = static_cast<C>(decode(p[base + i * stride]));
  };
  const auto same = [](auto v) { return v; };
  switch (t.dtype()) {
    case DataType::kFloat: return each(t.data<float>(), same);
    case DataType::kDouble: return each(t.data<double>(), same);
    case DataType::kFloat16:
      if constexpr (std::is_same_v<C, float>) {
        if (stride == 1) return math::HalfToFloatArray(t.data<uint16_t>() + base, out, n);
      }
      return each(t.data<uint16_t>(), [](uint16_t h) { return Float16ToFloat(h); });
    case DataType::kBfloat16:
      if constexpr (std::is_same_v<C, float>) {
        if (stride == 1) return math::Bfloat16ToFloatArray(t.data<uint16_t>() + base, out, n);
      }
      return each(t.data<uint16_t>(), [](uint16_t h) { return Bfloat16ToFloat(h); });
    default:
      for (int64_t i = 0; i < n; ++i) out[i] = static_cast<C>(t.GetAsDouble(base + i * stride));
      return;
  }
}

/// Elements [begin, begin + n) of any numeric tensor converted to C (float16/bfloat16 decoded).
template <typename C>
void ConvertRange(const Tensor& t, int64_t begin, int64_t n, C* out) {
  ConvertStrided(t, begin, 1, n, out);
}

/// Stores n values of C into elements [begin, begin + n) of t, rounding to float16/bfloat16 (a
/// double goes through float first), converting as C++ casts for other types.
template <typename C>
void StoreRange(const C* in, int64_t n, Tensor& t, int64_t begin) {
  switch (t.dtype()) {
    case DataType::kFloat: {
      float* p = t.data<float>() + begin;
      for (int64_t i = 0; i < n; ++i) p[i] = static_cast<float>(in[i]);
      return;
    }
    case DataType::kDouble: {
      double* p = t.data<double>() + begin;
      for (int64_t i = 0; i < n; ++i) p[i] = static_cast<double>(in[i]);
      return;
    }
    case DataType::kFloat16:
    case DataType::kBfloat16: {
      uint16_t* p = t.data<uint16_t>() + begin;
      const bool half = t.dtype() == DataType::kFloat16;
      if constexpr (std::is_same_v<C, float>) {
        half ? math::FloatToHalfArray(in, p, n) : math::FloatToBfloat16Array(in, p, n);
      } else {
        for (int64_t i = 0; i < n; ++i) {
          const float f = static_cast<float>(in[i]);
          p[i] = half ? FloatToFloat16(f) : FloatToBfloat16(f);
        }
      }
      return;
    }
    default:
      for (int64_t i = 0; i < n; ++i) t.SetFromDouble(begin + i, static_cast<double>(in[i]));
      return;
  }
}

/// Elements [begin, begin + n) as C: a pointer into t when its elements are C, else converted
/// into `buf` (room for n) and `buf`.
template <typename C>
const C* ReadRange(const Tensor& t, int64_t begin, int64_t n, C* buf) {
  if (StoredAs<C>(t)) return t.data<C>() + begin;
  ConvertRange(t, begin, n, buf);
  return buf;
}

/// Where a kernel writes elements [begin, begin + n) of t as C: into t itself when its elements
/// are C, else into `buf` (room for n), which CommitRange then stores into t.
template <typename C>
C* WriteRange(Tensor& t, int64_t begin, C* buf) {
  return StoredAs<C>(t) ? t.data<C>() + begin : buf;
}

/// Finishes a WriteRange: stores the n values written at `p` into t from `begin` (rounding as
/// StoreRange) unless they were written in place.
template <typename C>
void CommitRange(const C* p, int64_t n, Tensor& t, int64_t begin) {
  if (!StoredAs<C>(t)) StoreRange(p, n, t, begin);
}

/// block[r * len + jj] = t[base + r * stride + jj] as C, for r < rows and jj < len: `len`
/// positions of `rows` strided rows (a loss's classes over [N, C, D] scores).
template <typename C>
void ConvertBlock(const Tensor& t, int64_t base, int64_t rows, int64_t stride, int64_t len, C* block) {
  for (int64_t r = 0; r < rows; ++r) ConvertRange(t, base + r * stride, len, block + r * len);
}

/// Positions per block for ConvertBlock over `rows` rows of `d`: the block holds about 64K values
/// at most (at least one position, at most d).
inline int64_t BlockPositions(int64_t rows, int64_t d) {
  const int64_t fit = int64_t{65536} / (rows > 1 ? rows : 1);
  return fit < 1 ? 1 : (fit > d ? d : fit);
}

/// n elements of t from `base`, `stride` apart, as C: a pointer into t when they are contiguous C
/// values, else gathered into `buf` (room for n) and `buf`.
template <typename C>
const C* ReadStrided(const Tensor& t, int64_t base, int64_t stride, int64_t n, C* buf) {
  if (stride == 1) return ReadRange(t, base, n, buf);
  ConvertStrided(t, base, stride, n, buf);
  return buf;
}

/// Stores n values into elements base, base + stride, ... of t (rounding as StoreRange).
template <typename C>
void StoreStrided(const C* in, int64_t n, Tensor& t, int64_t base, int64_t stride) {
  if (stride == 1) {
    StoreRange(in, n, t, base);
    return;
  }
  for (int64_t i = 0; i < n; ++i) StoreRange(in + i, 1, t, base + i * stride);
}

/// One thread's scratch for kernels that work a row or chunk at a time: Get(i, n) is buffer i (of
/// four), holding at least n values; Bytes(n) a byte buffer (dropout masks).
template <typename C>
struct ChunkBuffers {
  std::vector<C> values[4];
  std::vector<uint8_t> bytes;
  C* Get(int i, size_t n) {
    if (values[i].size() < n) values[i].resize(n);
    return values[i].data();
  }
  uint8_t* Bytes(size_t n) {
    if (bytes.size() < n) bytes.resize(n);
    return bytes.data();
  }
};

/// ReadRange with its buffer from slot `slot` of `bufs`, taken only when the elements are
/// converted (a float tensor read in place touches no scratch).
template <typename C>
const C* ReadRange(const Tensor& t, int64_t begin, int64_t n, ChunkBuffers<C>& bufs, int slot) {
  if (StoredAs<C>(t)) return t.data<C>() + begin;
  return ReadRange(t, begin, n, bufs.Get(slot, static_cast<size_t>(n)));
}

/// WriteRange with its buffer from slot `slot` of `bufs`, taken only when t's elements are not C.
template <typename C>
C* WriteRange(Tensor& t, int64_t begin, int64_t n, ChunkBuffers<C>& bufs, int slot) {
  return StoredAs<C>(t) ? t.data<C>() + begin : bufs.Get(slot, static_cast<size_t>(n));
}

/// A block of a tensor as C with its row stride `ld`.
template <typename C>
struct BlockView {
  const C* data;
  int64_t ld;
};

/// `rows` rows `stride` apart of `len` elements each from `base`, as C: in place (ld = stride)
/// when t's elements are C, else converted (ConvertBlock) into slot `slot` of bufs (ld = len).
template <typename C>
BlockView<C> ReadBlock(const Tensor& t, int64_t base, int64_t rows, int64_t stride, int64_t len,
                       ChunkBuffers<C>& bufs, int slot) {
  if (StoredAs<C>(t)) return {t.data<C>() + base, stride};
  C* block = bufs.Get(slot, static_cast<size_t>(rows * len));
  ConvertBlock(t, base, rows, stride, len, block);
  return {block, len};
}

/// Stores t.numel() values of C into the whole of t (rounding as StoreRange).
template <typename C>
void StoreFromCompute(const C* in, Tensor& t) {
  StoreRange(in, t.numel(), t, 0);
}

/// Whole-tensor views, for parameters and small tensors (activations go a range at a time):
/// Read-only view of a tensor's elements as compute type C (no copy when the dtype is C).
template <typename C>
class InView {
 public:
  explicit InView(const Tensor& t) {
    if (StoredAs<C>(t)) {
      ptr_ = t.data<C>();
    } else {
      owned_.resize(static_cast<size_t>(t.numel()));
      ConvertRange(t, 0, t.numel(), owned_.data());
      ptr_ = owned_.data();
    }
  }
  InView(const InView&) = delete;
  InView& operator=(const InView&) = delete;
  const C* data() const { return ptr_; }
  C operator[](int64_t i) const { return ptr_[i]; }

 private:
  std::vector<C> owned_;
  const C* ptr_ = nullptr;
};

/// Writable view of an output tensor as compute type C; when the tensor's dtype differs, values
/// go to a scratch buffer that is rounded into the tensor on destruction.
template <typename C>
class OutView {
 public:
  explicit OutView(Tensor& t) : t_(t) {
    if (StoredAs<C>(t)) {
      ptr_ = t.data<C>();
    } else {
      owned_.assign(static_cast<size_t>(t.numel()), C(0));
      ptr_ = owned_.data();
    }
  }
  ~OutView() {
    if (!owned_.empty()) StoreFromCompute(owned_.data(), t_);
  }
  OutView(const OutView&) = delete;
  OutView& operator=(const OutView&) = delete;
  C* data() { return ptr_; }
  C& operator[](int64_t i) { return ptr_[i]; }

 private:
  Tensor& t_;
  std::vector<C> owned_;
  C* ptr_ = nullptr;
};

/// The kChunkElements-element chunk of a tensor that holds element i, as C: the state
/// ChunkedReader and ChunkedWriter share.
template <typename C>
struct ElementChunk {
  std::vector<C> values;
  int64_t start = 0, count = 0;
  bool Holds(int64_t i) const { return i >= start && i < start + count; }
  /// Converts the chunk of t holding element i into `values`.
  void Load(const Tensor& t, int64_t i) {
    start = i - i % kChunkElements;
    count = std::min(kChunkElements, t.numel() - start);
    values.resize(static_cast<size_t>(kChunkElements));
    ConvertRange(t, start, count, values.data());
  }
  C& at(int64_t i) { return values[static_cast<size_t>(i - start)]; }
};

/// Element reads of a tensor as C for single-threaded walks (ForEachIndexed's order): the tensor
/// itself when its elements are C, else the chunk holding the element, converted when the walk
/// enters it. Any order is correct; increasing order converts each chunk once.
template <typename C>
class ChunkedReader {
 public:
  explicit ChunkedReader(const Tensor& t) : t_(t), direct_(StoredAs<C>(t) ? t.data<C>() : nullptr) {}
  C operator[](int64_t i) {
    if (direct_ != nullptr) return direct_[i];
    if (!chunk_.Holds(i)) chunk_.Load(t_, i);
    return chunk_.at(i);
  }

 private:
  const Tensor& t_;
  const C* direct_;
  ElementChunk<C> chunk_;
};

/// Element access to an output tensor as C for single-threaded walks, as ChunkedReader: the
/// chunk holding the element is converted when the walk enters it and stored back (rounded once)
/// when the walk leaves it or at Flush / destruction.
template <typename C>
class ChunkedWriter {
 public:
  explicit ChunkedWriter(Tensor& t) : t_(t), direct_(StoredAs<C>(t) ? t.data<C>() : nullptr) {}
  ~ChunkedWriter() { Flush(); }
  ChunkedWriter(const ChunkedWriter&) = delete;
  ChunkedWriter& operator=(const ChunkedWriter&) = delete;
  C& operator[](int64_t i) {
    if (direct_ != nullptr) return direct_[i];
    if (!chunk_.Holds(i)) {
      Flush();
      chunk_.Load(t_, i);
    }
    return chunk_.at(i);
  }
  /// Stores the current chunk into the tensor (the chunk stays current).
  void Flush() {
    if (chunk_.count > 0) StoreRange(chunk_.values.data(), chunk_.count, t_, chunk_.start);
  }

 private:
  Tensor& t_;
  C* direct_;
  ElementChunk<C> chunk_;
};

/// Runs fn(first, count, buffers) over [0, n) in chunks of kChunkElements on the kernel threads
/// (ParallelFor, `cost` per element), `buffers` being the calling thread's ChunkBuffers<C>.
template <typename C, typename Fn>
void ForEachChunk(int64_t n, int64_t cost, Fn&& fn) {
  ParallelFor((n + kChunkElements - 1) / kChunkElements, kChunkElements * cost, [&](int64_t begin, int64_t end) {
    ChunkBuffers<C> buffers;
    for (int64_t c = begin; c < end; ++c) {
      const int64_t first = c * kChunkElements;
      fn(first, n - first < kChunkElements ? n - first : kChunkElements, buffers);
    }
  });
}

}  // namespace memopt
