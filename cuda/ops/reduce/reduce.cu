// Device code of kernels/reduce.cc: the passes of ReduceSum/Mean/Max/Min/SumSquare/L2/LogSumExp
// over [outer, len, inner] views (one thread per output for short reductions, a warp or block
// per row for many rows with inner == 1, else the chunked column reduction; reduce_common.cuh),
// accumulating in float, and the variadic Sum/Mean/Max/Min.
#include <math.h>

#include "reduce_common.cuh"

namespace memopt::cuda {
namespace {

/// Sum, Mean, SumSquare, L2. Partial results between passes are plain sums.
struct SumReduce {
  using Acc = float;
  bool square = false;  // first pass of SumSquare/L2
  bool finish = false;  // last pass: divide (Mean) and take the root (L2)
  bool root = false;
  float divisor = 1.0f;
  __device__ float Init() const { return 0.0f; }
  __device__ float Add(float a, float v) const { return a + (square ? v * v : v); }
  __device__ float Merge(float a, float b) const { return a + b; }
  __device__ float Finish(float a) const {
    if (!finish) return a;
    const float m = a / divisor;
    return root ? sqrtf(m) : m;
  }
};

/// Max and Min; a NaN wins over everything, as on the CPU.
struct MinMaxReduce {
  using Acc = float;
  bool is_min = false;
  __device__ float Init() const { return is_min ? INFINITY : -INFINITY; }
  __device__ float Merge(float a, float v) const {
    if (isnan(v)) return v;
    return (is_min ? v < a : v > a) ? v : a;
  }
  __device__ float Add(float a, float v) const { return Merge(a, v); }
  __device__ float Finish(float a) const { return a; }
};

/// log(sum(exp(x))) with a running maximum: Acc = (max so far, sum of exp(x - max)). The CPU
/// subtracts the overall maximum; a NaN or infinite maximum is the result itself, as there.
/// Partial results between passes are log-sum-exps, which fold the same way as elements.
struct LogSumExpReduce {
  using Acc = float2;
  __device__ float2 Init() const { return make_float2(-INFINITY, 0.0f); }
  __device__ float2 Add(float2 a, float v) const {
    if (isnan(a.x)) return a;
    if (isnan(v)) return make_float2(v, 0.0f);
    if (v > a.x) return make_float2(v, (a.x == -INFINITY ? 0.0f : a.y * expf(a.x - v)) + 1.0f);
    if (v == -INFINITY || isinf(a.x)) return a;  // adds nothing, or the maximum is +inf (the result)
    return make_float2(a.x, a.y + expf(v - a.x));
  }
  __device__ float2 Merge(float2 a, float2 b) const {
    if (isnan(a.x)) return a;
    if (isnan(b.x)) return b;
    const float m = fmaxf(a.x, b.x);
    if (isinf(m)) return make_float2(m, 0.0f);
    return make_float2(m, a.y * expf(a.x - m) + b.y * expf(b.x - m));
  }
  __device__ float Finish(float2 a) const { return isfinite(a.x) ? logf(a.y) + a.x : a.x; }
};

template <typename T>
struct PassSrc {
  static constexpr int kMaxVec = 16 / static_cast<int>(sizeof(T));
  const T* x;
  int64_t len, inner;
  __device__ float Load(int64_t o, int64_t r, int64_t c) const { return Elem<T>::Load(x[(o * len + r) * inner + c]); }
  template <int V>
  __device__ void LoadVec(int64_t o, int64_t r, int64_t c, float* out) const {
    LoadFloats<T, V>(x + (o * len + r) * inner + c, out);
  }
};

template <typename Op, typename T>
struct PassOut {
  Op op;
  T* y;
  __device__ void Store(int64_t j, typename Op::Acc a) const { y[j] = Elem<T>::Store(op.Finish(a)); }
};

/// One thread per output j = (o, c), folding its elements in order.
template <typename Op, typename Src, typename Out>
__global__ void PointReduceKernel(Op op, Src src, Out out, int64_t n, int64_t len, int64_t inner) {
  MEMOPT_GRID_STRIDE(j, n) {
    const int64_t o = j / inner;
    const int64_t c = j - o * inner;
    typename Op::Acc acc = op.Init();
    for (int64_t r = 0; r < len; ++r) acc = op.Add(acc, src.Load(o, r, c));
    out.Store(j, acc);
  }
}

template <typename Op, typename In, typename Out>
cudaError_t RunPass(const Op& op, const void* x, void* y, const ReducePass& p, float* scratch, cudaStream_t stream) {
  const PassSrc<In> src{static_cast<const In*>(x), p.len, p.inner};
  const PassOut<Op, Out> out{op, static_cast<Out*>(y)};
  if (p.len <= kPointReduceMaxLen) {
    const int64_t n = p.outer * p.inner;
    PointReduceKernel<<<BlocksFor(n), kThreads, 0, stream>>>(op, src, out, n, p.len, p.inner);
    return cudaGetLastError();
  }
  if (p.inner == 1 && p.outer >= kRowReduceMinRows) return LaunchRowReduce(op, src, out, p.outer, p.len, stream);
  // 16 bytes of columns per thread and row when the rows are made of whole 16-byte vectors.
  const int vec = AlignedTo(16, {x}) ? ColumnVecFor(p.inner, static_cast<int>(sizeof(In))) : 1;
  return LaunchColumnReduce(op, src, out, PlanColumnReduce(p.outer, p.len, p.inner, vec),
                            reinterpret_cast<typename Op::Acc*>(scratch), stream);
}

template <typename Op>
cudaError_t DispatchPass(const Op& op, ElemType in_type, ElemType out_type, const void* x, void* y,
                         const ReducePass& p, float* scratch, cudaStream_t stream) {
  return DispatchTypePair(in_type, out_type, [&](auto in, auto out) {
    return RunPass<Op, decltype(in), decltype(out)>(op, x, y, p, scratch, stream);
  });
}

// ---------------------------------------------------------------------------------------------
// Variadic Sum/Mean/Max/Min.

__device__ inline float ApplyVariadic(VariadicOp op, float a, float b) {
  switch (op) {
    case VariadicOp::kSum: return a + b;
    case VariadicOp::kMax:
      if (isnan(a) || isnan(b)) return NAN;
      return a < b ? b : a;
    case VariadicOp::kMin:
      if (isnan(a) || isnan(b)) return NAN;
      return b < a ? b : a;
  }
  return a;
}

template <typename T>
__global__ void VariadicKernel(VariadicOp op, VariadicArgs a, bool fold_into_y, float divisor, T* y, int64_t n) {
  using E = Elem<T>;
  MEMOPT_GRID_STRIDE(i, n) {
    // Loops over the fixed bounds, so the coordinates and strides stay in registers.
    int64_t coord[kMaxRank];
    int64_t rest = i;
#pragma unroll
    for (int d = kMaxRank - 1; d >= 0; --d) {
      if (d >= a.rank) {
        coord[d] = 0;
      } else if (d == 0) {
        coord[d] = rest;  // the outermost dim needs no division
      } else {
        coord[d] = rest % a.dims[d];
        rest /= a.dims[d];
      }
    }
    float acc = fold_into_y ? E::Load(y[i]) : 0.0f;
#pragma unroll
    for (int k = 0; k < kMaxVariadicInputs; ++k) {
      if (k < a.count) {
        int64_t off = 0;
#pragma unroll
        for (int d = 0; d < kMaxRank; ++d) off += coord[d] * a.strides[k][d];
        const float v = E::Load(static_cast<const T*>(a.inputs[k])[off]);
        // Rounded after every step, as the CPU stores each binary fold in the element type.
        acc = (k == 0 && !fold_into_y) ? v : E::Load(E::Store(ApplyVariadic(op, acc, v)));
      }
    }
    if (divisor > 0.0f) acc = acc / divisor;
    y[i] = E::Store(acc);
  }
}

template <typename T>
cudaError_t RunVariadic(VariadicOp op, const VariadicArgs& a, bool fold_into_y, float divisor, void* y, int64_t n,
                        cudaStream_t stream) {
  VariadicKernel<T><<<BlocksFor(n), kThreads, 0, stream>>>(op, a, fold_into_y, divisor, static_cast<T*>(y), n);
  return cudaGetLastError();
}

}  // namespace

cudaError_t LaunchReducePass(ReduceKind kind, ElemType in_type, ElemType out_type, const void* x, void* y,
                             const ReducePass& p, bool first, bool last, int64_t count, float* scratch,
                             cudaStream_t stream) {
  if (p.outer * p.inner == 0) return cudaSuccess;
  switch (kind) {
    case ReduceKind::kMax:
    case ReduceKind::kMin: {
      MinMaxReduce op;
      op.is_min = kind == ReduceKind::kMin;
      return DispatchPass(op, in_type, out_type, x, y, p, scratch, stream);
    }
    case ReduceKind::kLogSumExp: return DispatchPass(LogSumExpReduce{}, in_type, out_type, x, y, p, scratch, stream);
    default: {
      SumReduce op;
      op.square = first && (kind == ReduceKind::kSumSquare || kind == ReduceKind::kL2);
      op.finish = last;
      op.root = kind == ReduceKind::kL2;
      op.divisor = kind == ReduceKind::kMean ? static_cast<float>(count) : 1.0f;
      return DispatchPass(op, in_type, out_type, x, y, p, scratch, stream);
    }
  }
}

cudaError_t LaunchVariadic(VariadicOp op, ElemType t, const VariadicArgs& a, bool fold_into_y, float divisor,
                           void* y, int64_t n, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  switch (t) {
    case ElemType::kF32: return RunVariadic<float>(op, a, fold_into_y, divisor, y, n, stream);
    case ElemType::kF16: return RunVariadic<F16>(op, a, fold_into_y, divisor, y, n, stream);
    case ElemType::kBF16: return RunVariadic<BF16>(op, a, fold_into_y, divisor, y, n, stream);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace memopt::cuda
