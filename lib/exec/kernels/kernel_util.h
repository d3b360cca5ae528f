// Helpers shared by the CPU kernel files: element types as C++ types (with float16/bfloat16
// computed in float32), dtype dispatch, axis normalisation, broadcasting iteration, a two-thread
// parallel-for and BLAS matrix products.
//
// Typical use in a kernel:
//   return DispatchFloat(x.dtype(), [&](auto tag) -> Status {
//     using T = typename decltype(tag)::type;        // float, double, Half or BFloat16
//     using C = ComputeType<T>;                      // float or double
//     const T* in = x.data<T>();
//     T* out = y.data<T>();
//     for (int64_t i = 0; i < n; ++i) out[i] = StoreAs<T>(std::tanh(Load(in[i])));
//     return Status::Ok();
//   });
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "exec/tensor.h"
#include "ir/dtype.h"
#include "util/element.h"
#include "util/status.h"

namespace memopt {

// ---------------------------------------------------------------------------------------------
// Element types.

/// The DataType of storage type T.
template <typename T>
constexpr DataType DataTypeOf() {
  if constexpr (std::is_same_v<T, float>)
    return DataType::kFloat;
  else if constexpr (std::is_same_v<T, double>)
    return DataType::kDouble;
  else if constexpr (std::is_same_v<T, Half>)
    return DataType::kFloat16;
  else if constexpr (std::is_same_v<T, BFloat16>)
    return DataType::kBfloat16;
  else if constexpr (std::is_same_v<T, int8_t>)
    return DataType::kInt8;
  else if constexpr (std::is_same_v<T, uint8_t>)
    return DataType::kUint8;
  else if constexpr (std::is_same_v<T, int16_t>)
    return DataType::kInt16;
  else if constexpr (std::is_same_v<T, uint16_t>)
    return DataType::kUint16;
  else if constexpr (std::is_same_v<T, int32_t>)
    return DataType::kInt32;
  else if constexpr (std::is_same_v<T, uint32_t>)
    return DataType::kUint32;
  else if constexpr (std::is_same_v<T, int64_t>)
    return DataType::kInt64;
  else if constexpr (std::is_same_v<T, uint64_t>)
    return DataType::kUint64;
  else if constexpr (std::is_same_v<T, bool>)
    return DataType::kBool;
  else
    return DataType::kUndefined;
}

template <typename T>
struct TypeTag {
  using type = T;
};

/// Error for a dtype a kernel does not handle ("unsupported data type 'int64'").
Status UnsupportedType(DataType t, const std::string& what = "");

namespace detail {
template <typename T, typename F>
Status CallTag(F& f) {
  if constexpr (std::is_void_v<decltype(f(TypeTag<T>{}))>) {
    f(TypeTag<T>{});
    return Status::Ok();
  } else {
    return f(TypeTag<T>{});
  }
}
}  // namespace detail

#define MEMOPT_DISPATCH_CASE_(DT, T) \
  case DataType::DT:                 \
    return detail::CallTag<T>(f)

/// Calls f(TypeTag<T>{}) for float, double, float16 (Half), bfloat16 (BFloat16). f returns void or
/// Status; other dtypes give UnsupportedType.
template <typename F>
Status DispatchFloat(DataType t, F&& f) {
  switch (t) {
    MEMOPT_DISPATCH_CASE_(kFloat, float);
    MEMOPT_DISPATCH_CASE_(kDouble, double);
    MEMOPT_DISPATCH_CASE_(kFloat16, Half);
    MEMOPT_DISPATCH_CASE_(kBfloat16, BFloat16);
    default:
      return UnsupportedType(t);
  }
}

/// Signed and unsigned integers of 8..64 bits.
template <typename F>
Status DispatchInt(DataType t, F&& f) {
  switch (t) {
    MEMOPT_DISPATCH_CASE_(kInt8, int8_t);
    MEMOPT_DISPATCH_CASE_(kUint8, uint8_t);
    MEMOPT_DISPATCH_CASE_(kInt16, int16_t);
    MEMOPT_DISPATCH_CASE_(kUint16, uint16_t);
    MEMOPT_DISPATCH_CASE_(kInt32, int32_t);
    MEMOPT_DISPATCH_CASE_(kUint32, uint32_t);
    MEMOPT_DISPATCH_CASE_(kInt64, int64_t);
    MEMOPT_DISPATCH_CASE_(kUint64, uint64_t);
    default:
      return UnsupportedType(t);
  }
}

/// Floats and integers (no bool, no string).
template <typename F>
Status DispatchNumeric(DataType t, F&& f) {
  if (t == DataType::kFloat || t == DataType::kDouble || t == DataType::kFloat16 || t == DataType::kBfloat16)
    return DispatchFloat(t, f);
  return DispatchInt(t, f);
}

/// Numeric types and bool.
template <typename F>
Status DispatchAll(DataType t, F&& f) {
  if (t == DataType::kBool) return detail::CallTag<bool>(f);
  return DispatchNumeric(t, f);
}

/// Dispatch on element size only (for data movement: copy, gather, transpose, ...). Calls
/// f(TypeTag<U>{}) with U = uint8_t/uint16_t/uint32_t/uint64_t of the same size as one element.
/// String tensors are not handled (UnsupportedType).
template <typename F>
Status DispatchBySize(DataType t, F&& f) {
  if (t == DataType::kString) return UnsupportedType(t);
  switch (ElemByteSize(t)) {
    case 1:
      return detail::CallTag<uint8_t>(f);
    case 2:
      return detail::CallTag<uint16_t>(f);
    case 4:
      return detail::CallTag<uint32_t>(f);
    case 8:
      return detail::CallTag<uint64_t>(f);
    default:
      return UnsupportedType(t);
  }
}

#undef MEMOPT_DISPATCH_CASE_

// ---------------------------------------------------------------------------------------------
// Axes and shapes.

/// axis in [-rank, rank) -> [0, rank); nullopt when out of range.
std::optional<int64_t> NormalizeAxis(int64_t axis, int64_t rank);
/// Same, for a list of axes (duplicates are an error: nullopt). Result sorted ascending.
std::optional<std::vector<int64_t>> NormalizeAxes(const std::vector<int64_t>& axes, int64_t rank);

/// numpy-style broadcast of two shapes; nullopt when incompatible.
std::optional<std::vector<int64_t>> BroadcastShape(const std::vector<int64_t>& a, const std::vector<int64_t>& b);
/// Broadcast of several shapes.
std::optional<std::vector<int64_t>> BroadcastShapes(const std::vector<std::vector<int64_t>>& shapes);

/// Strides (in elements) to read `in_shape` as if it had `out_shape` (right-aligned, stride 0 on
/// broadcast dims). Result has out_shape.size() entries. in_shape must be broadcastable.
std::vector<int64_t> BroadcastStrides(const std::vector<int64_t>& in_shape, const std::vector<int64_t>& out_shape);

/// "[2, 3, 4]"
std::string ShapeToString(const std::vector<int64_t>& shape);

/// Product of shape[begin, end).
int64_t ProductOf(const std::vector<int64_t>& shape, int64_t begin, int64_t end);

/// Iterates over every element of `out_shape` in row-major order, keeping one offset per input
/// (computed from `strides[k]`, which have out_shape.size() entries each, e.g. BroadcastStrides).
/// Calls fn(out_index, offsets) where offsets is a const int64_t* with strides.size() entries.
/// Dimensions are collapsed where possible; the innermost loop is a plain counter.
template <typename Fn>
void ForEachIndexed(const std::vector<int64_t>& out_shape, const std::vector<std::vector<int64_t>>& strides, Fn&& fn);

/// Elementwise binary op with broadcasting: out[i] = f(a[ia], b[ib]). Has fast paths for equal
/// shapes and scalar operands. A, B, O are storage types of plain arrays.
template <typename A, typename B, typename O, typename F>
void BroadcastBinary(const A* a, const std::vector<int64_t>& a_shape, const B* b, const std::vector<int64_t>& b_shape,
                     O* out, const std::vector<int64_t>& out_shape, F&& f);

// ---------------------------------------------------------------------------------------------
// Threads.

/// Elements per chunk of the kernels that work a chunk at a time (float_range.h's ForEachChunk,
/// the dropout masks): a multiple of 32, so a bitmask word never spans two chunks.
inline constexpr int64_t kChunkElements = 4096;

/// Threads used by ParallelFor and by Gemm's split of large products (BLAS itself runs
/// single-threaded): SetNumThreads's count, else MEMOPT_NUM_THREADS, else the machine's cores.
int NumThreads();
/// Sets the thread count (clamped to 1..256) for the kernels that follow; call it between runs,
/// not while a kernel runs.
void SetNumThreads(int n);

/// Splits [0, n) into contiguous chunks and runs fn(begin, end) on up to NumThreads() threads.
/// Runs inline when n * cost_per_item is small (< ~32k units) or when called from inside another
/// ParallelFor. fn must be safe to call concurrently on disjoint ranges.
void ParallelFor(int64_t n, int64_t cost_per_item, const std::function<void(int64_t, int64_t)>& fn);
/// True on a thread inside a ParallelFor call (its body, inline or as one of the threads): the
/// executor's arena offers its slots only outside them (exec/arena_allocator.h), so which tensors
/// get a slot does not depend on the thread count.
bool InParallelFor();

// ---------------------------------------------------------------------------------------------
// Matrix products (row-major, through BLAS).

/// C[m,n] = alpha * op(A)[m,k] * op(B)[k,n] + beta * C. lda/ldb/ldc are row strides of A, B, C as
/// stored (A is [m,k] or, transposed, [k,m]).
/// Products of 2 * 2^20 multiply-adds and more are cut into up to 8 row or column blocks, one BLAS
/// call each, run over NumThreads() (one after another inside a ParallelFor). The cut depends on
/// the shape alone, so the result has the same bits on any thread count, whichever kernel
/// OpenBLAS selected (OPENBLAS_CORETYPE); it may differ from one whole-product BLAS call.
void Gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
          const float* b, int64_t ldb, float beta, float* c, int64_t ldc);
void Gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha, const double* a, int64_t lda,
          const double* b, int64_t ldb, double beta, double* c, int64_t ldc);

/// The same product as one single-threaded BLAS call, never cut: for callers that run many
/// products in parallel themselves (a convolution's output tiles). Its bits depend on the shape
/// alone too. A cut product re-packs the operand its blocks share once per block; a forward
/// convolution's tile shares a large one either way (the weights or the column matrix).
void GemmOneCall(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                 int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc);
void GemmOneCall(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha, const double* a,
                 int64_t lda, const double* b, int64_t ldb, double beta, double* c, int64_t ldc);

/// Below this many products a kernel runs in parallel, each is cut into blocks on the threads.
inline constexpr int64_t kMinParallelProducts = 8;

/// One of `products` products a kernel runs in parallel (a convolution's tiles): GemmOneCall, or
/// Gemm, whose blocks use the threads, when there are fewer than kMinParallelProducts (one image
/// of a few tiles would otherwise run on one thread). The choice follows the shape alone.
template <typename T>
void GemmAmong(int64_t products, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, T alpha, const T* a,
               int64_t lda, const T* b, int64_t ldb, T beta, T* c, int64_t ldc) {
  if (products < kMinParallelProducts) {
    Gemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  } else {
    GemmOneCall(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  }
}

/// The kernel set OpenBLAS selected ("Haswell", "SkylakeX", "Prescott", ...: OPENBLAS_CORETYPE or
/// its CPU detection); "" for another BLAS.
std::string BlasCoreName();

/// Converts a float16/bfloat16/float/double tensor's elements to a float vector (and back).
std::vector<float> ToFloatVector(const Tensor& t);
/// Writes `values` into t (t's dtype must be floating; numel must match), rounding as needed.
void FromFloatVector(const std::vector<float>& values, Tensor& t);

// ---------------------------------------------------------------------------------------------
// Template definitions.

template <typename Fn>
void ForEachIndexed(const std::vector<int64_t>& out_shape, const std::vector<std::vector<int64_t>>& strides, Fn&& fn) {
  const size_t k = strides.size();
  // Collapse adjacent dims d-1, d when every input's stride satisfies s[d-1] == s[d] * n[d].
  std::vector<int64_t> dims;
  std::vector<std::vector<int64_t>> st(k);
  for (size_t d = 0; d < out_shape.size(); ++d) {
    if (out_shape[d] == 0) return;
    if (out_shape[d] == 1) continue;
    bool merge = !dims.empty();
    for (size_t j = 0; merge && j < k; ++j) merge = st[j].back() == strides[j][d] * out_shape[d];
    if (merge) {
      dims.back() *= out_shape[d];
      for (size_t j = 0; j < k; ++j) st[j].back() = strides[j][d];
    } else {
      dims.push_back(out_shape[d]);
      for (size_t j = 0; j < k; ++j) st[j].push_back(strides[j][d]);
    }
  }
  std::vector<int64_t> offsets(k, 0);
  if (dims.empty()) {
    fn(int64_t{0}, static_cast<const int64_t*>(offsets.data()));
    return;
  }
  const size_t r = dims.size();
  const int64_t inner = dims[r - 1];
  std::vector<int64_t> inner_stride(k);
  for (size_t j = 0; j < k; ++j) inner_stride[j] = st[j][r - 1];
  std::vector<int64_t> counter(r, 0);
  std::vector<int64_t> cur(k, 0);
  int64_t out = 0;
  while (true) {
    for (size_t j = 0; j < k; ++j) cur[j] = offsets[j];
    for (int64_t i = 0; i < inner; ++i, ++out) {
      fn(out, static_cast<const int64_t*>(cur.data()));
      for (size_t j = 0; j < k; ++j) cur[j] += inner_stride[j];
    }
    // Advance the outer counter.
    int64_t d = static_cast<int64_t>(r) - 2;
    for (; d >= 0; --d) {
      for (size_t j = 0; j < k; ++j) offsets[j] += st[j][d];
      if (++counter[d] < dims[d]) break;
      for (size_t j = 0; j < k; ++j) offsets[j] -= st[j][d] * dims[d];
      counter[d] = 0;
    }
    if (d < 0) return;
  }
}

template <typename A, typename B, typename O, typename F>
void BroadcastBinary(const A* a, const std::vector<int64_t>& a_shape, const B* b, const std::vector<int64_t>& b_shape,
                     O* out, const std::vector<int64_t>& out_shape, F&& f) {
  const int64_t n = NumElements(out_shape);
  const int64_t na = NumElements(a_shape);
  const int64_t nb = NumElements(b_shape);
  if (na == n && nb == n) {
    ParallelFor(n, 1, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) out[i] = f(a[i], b[i]);
    });
    return;
  }
  if (nb == 1 && na == n) {
    const B bv = b[0];
    ParallelFor(n, 1, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) out[i] = f(a[i], bv);
    });
    return;
  }
  if (na == 1 && nb == n) {
    const A av = a[0];
    ParallelFor(n, 1, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) out[i] = f(av, b[i]);
    });
    return;
  }
  // Common bias case: b's shape is a suffix of out's shape (row-wise broadcast).
  if (na == n && nb > 0 && n % nb == 0) {
    bool suffix = b_shape.size() <= out_shape.size();
    for (size_t i = 0; suffix && i < b_shape.size(); ++i) {
      size_t o = out_shape.size() - b_shape.size() + i;
      suffix = b_shape[i] == out_shape[o];
    }
    if (suffix) {
      const int64_t rows = n / nb;
      ParallelFor(rows, nb, [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
          const A* ar = a + r * nb;
          O* orow = out + r * nb;
          for (int64_t i = 0; i < nb; ++i) orow[i] = f(ar[i], b[i]);
        }
      });
      return;
    }
  }
  std::vector<std::vector<int64_t>> strides = {BroadcastStrides(a_shape, out_shape),
                                               BroadcastStrides(b_shape, out_shape)};
  ForEachIndexed(out_shape, strides, [&](int64_t i, const int64_t* off) { out[i] = f(a[off[0]], b[off[1]]); });
}

}  // namespace memopt
