// Internals shared by the elementwise CPU kernels (lib/ops/elementwise/*_cpu.cc and other
// elementwise ops' kernels): the dtype lists used for KernelInfo::types,
// and small loop helpers on top of kernel_util.h.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "exec/kernel.h"
#include "exec/kernels/kernel_util.h"

namespace memopt::elementwise {

// Registration, one per file.

// Element types for KernelInfo::types.
std::vector<DataType> FloatTypes();                // float, double, float16, bfloat16
std::vector<DataType> IntTypes();                  // int8..uint64
std::vector<DataType> NumericTypes();              // floats and ints
std::vector<DataType> NumericAndBoolTypes();       // floats, ints, bool
std::vector<DataType> AllTypes();                  // numeric, bool, string

/// Checks that inputs [0, n) are present; error naming the node otherwise.
Status RequireInputs(const KernelContext& ctx, int n);

/// Applies f (compute type -> compute value) to every element: out[i] = StoreAs<O>(f(Load(in[i]))).
/// `cost` is a rough per-element cost for ParallelFor (1 = an add).
template <typename T, typename O, typename F>
void MapUnary(const T* in, O* out, int64_t n, int64_t cost, F f) {
  ParallelFor(n, cost, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) out[i] = StoreAs<O>(f(Load(in[i])));
  });
}

/// Output 0 = f(input 0) elementwise, same dtype and shape, for the float types (f receives float
/// for float/float16/bfloat16 and double for double).
template <typename F>
Status UnaryFloat(KernelContext& ctx, int64_t cost, F f) {
  MEMOPT_RETURN_IF_ERROR(RequireInputs(ctx, 1));
  const Tensor& x = ctx.input(0);
  ctx.outputs[0] = Tensor::Uninitialized(x.dtype(), x.shape());
  Tensor& y = ctx.outputs[0];
  return DispatchFloat(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    MapUnary(x.data<T>(), y.data<T>(), x.numel(), cost, f);
  });
}

/// UnaryFloat whose float tensors go through a vectorised array form array(in, out, count) (see
/// exec/math/vector_math.h), in chunks over the threads; the other float types through f.
template <typename A, typename F>
Status UnaryFloatArray(KernelContext& ctx, int64_t cost, A array, F f) {
  MEMOPT_RETURN_IF_ERROR(RequireInputs(ctx, 1));
  const Tensor& x = ctx.input(0);
  if (x.dtype() != DataType::kFloat) return UnaryFloat(ctx, cost, f);
  ctx.outputs[0] = Tensor::Uninitialized(x.dtype(), x.shape());
  const float* in = x.data<float>();
  float* out = ctx.outputs[0].data<float>();
  ParallelFor(x.numel(), cost, [&](int64_t begin, int64_t end) { array(in + begin, out + begin, end - begin); });
  return Status::Ok();
}

/// Same for every numeric type (f receives the compute type: float, double or the integer type).
template <typename F>
Status UnaryNumeric(KernelContext& ctx, int64_t cost, F f) {
  MEMOPT_RETURN_IF_ERROR(RequireInputs(ctx, 1));
  const Tensor& x = ctx.input(0);
  ctx.outputs[0] = Tensor::Uninitialized(x.dtype(), x.shape());
  Tensor& y = ctx.outputs[0];
  return DispatchNumeric(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    MapUnary(x.data<T>(), y.data<T>(), x.numel(), cost, f);
  });
}

/// Output shape of broadcasting inputs [0, n) (all present); error naming the shapes otherwise.
Expected<std::vector<int64_t>> BroadcastInputs(const KernelContext& ctx, int n);

/// Walks the broadcast of K inputs to `out_shape` row by row: dims are collapsed (size-1 dims
/// dropped, adjacent dims merged where every input allows), and row(out_offset, offsets, count,
/// steps) is called for each run of the innermost dim, where offsets[k] is input k's element
/// offset and steps[k] (0 or 1) its stride along the run. Rows are split over ParallelFor.
template <size_t K, typename Row>
void ForEachBroadcastRow(const std::array<const std::vector<int64_t>*, K>& in_shapes,
                         const std::vector<int64_t>& out_shape, Row row) {
  std::array<std::vector<int64_t>, K> full;
  for (size_t k = 0; k < K; ++k) full[k] = BroadcastStrides(*in_shapes[k], out_shape);
  std::vector<int64_t> dims;
  std::array<std::vector<int64_t>, K> st;
  for (size_t d = 0; d < out_shape.size(); ++d) {
    if (out_shape[d] == 0) return;
    if (out_shape[d] == 1) continue;
    bool merge = !dims.empty();
    for (size_t k = 0; merge && k < K; ++k) merge = st[k].back() == full[k][d] * out_shape[d];
    if (merge) {
      dims.back() *= out_shape[d];
      for (size_t k = 0; k < K; ++k) st[k].back() = full[k][d];
    } else {
      dims.push_back(out_shape[d]);
      for (size_t k = 0; k < K; ++k) st[k].push_back(full[k][d]);
    }
  }
  std::array<int64_t, K> steps{};
  if (dims.empty()) {  // a single element
    std::array<int64_t, K> offsets{};
    row(int64_t{0}, offsets, int64_t{1}, steps);
    return;
  }
  const size_t r = dims.size();
  const int64_t inner = dims[r - 1];
  for (size_t k = 0; k < K; ++k) steps[k] = st[k][r - 1];
  int64_t rows = 1;
  for (size_t d = 0; d + 1 < r; ++d) rows *= dims[d];
  ParallelFor(rows, inner, [&](int64_t begin, int64_t end) {
    // Multi-index of row `begin` over the outer dims, and the matching input offsets.
    std::vector<int64_t> idx(r, 0);
    std::array<int64_t, K> offsets{};
    int64_t rem = begin;
    for (size_t d = r - 1; d-- > 0;) {
      idx[d] = rem % dims[d];
      rem /= dims[d];
      for (size_t k = 0; k < K; ++k) offsets[k] += idx[d] * st[k][d];
    }
    for (int64_t rw = begin; rw < end; ++rw) {
      row(rw * inner, offsets, inner, steps);
      for (size_t d = r - 1; d-- > 0;) {
        for (size_t k = 0; k < K; ++k) offsets[k] += st[k][d];
        if (++idx[d] < dims[d]) break;
        for (size_t k = 0; k < K; ++k) offsets[k] -= st[k][d] * dims[d];
        idx[d] = 0;
      }
    }
  });
}

/// out = f(a, b) elementwise with numpy broadcasting (f takes storage values and returns the
/// storage value of O). Flat loops when both shapes equal the output or one side is a scalar;
/// otherwise row-wise loops specialised on which side is broadcast along the row.
template <typename A, typename B, typename O, typename F>
void Binary(const A* a, const std::vector<int64_t>& a_shape, const B* b, const std::vector<int64_t>& b_shape, O* out,
            const std::vector<int64_t>& out_shape, F f) {
  const int64_t n = NumElements(out_shape);
  const int64_t na = NumElements(a_shape);
  const int64_t nb = NumElements(b_shape);
  if (n == 0) return;
  if (na == n && nb == n) {
    ParallelFor(n, 1, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) out[i] = f(a[i], b[i]);
    });
  } else if (na == n && nb == 1) {
    const B bv = b[0];
    ParallelFor(n, 1, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) out[i] = f(a[i], bv);
    });
  } else if (na == 1 && nb == n) {
    const A av = a[0];
    ParallelFor(n, 1, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) out[i] = f(av, b[i]);
    });
  } else {
    ForEachBroadcastRow<2>({&a_shape, &b_shape}, out_shape,
                           [&](int64_t o, const std::array<int64_t, 2>& off, int64_t cnt, const std::array<int64_t, 2>& step) {
                             const A* pa = a + off[0];
                             const B* pb = b + off[1];
                             O* po = out + o;
                             if (step[0] != 0 && step[1] != 0) {
                               for (int64_t i = 0; i < cnt; ++i) po[i] = f(pa[i], pb[i]);
                             } else if (step[0] != 0) {
                               const B bv = *pb;
                               for (int64_t i = 0; i < cnt; ++i) po[i] = f(pa[i], bv);
                             } else if (step[1] != 0) {
                               const A av = *pa;
                               for (int64_t i = 0; i < cnt; ++i) po[i] = f(av, pb[i]);
                             } else {
                               const O v = f(*pa, *pb);
                               for (int64_t i = 0; i < cnt; ++i) po[i] = v;
                             }
                           });
  }
}

}  // namespace memopt::elementwise
