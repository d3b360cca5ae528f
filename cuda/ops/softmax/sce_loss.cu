// Device code of the softmax cross-entropy ops of softmax.cc. The forward pass is a
// log-softmax over the class axis per sample (in float, as the CPU), writing log_prob and the
// sample's loss; contiguous rows that fit in shared memory are read once, by a block per row; sum/mean then sum the per-sample losses and weights in one block, in double and
// in a fixed order, so the scalar is reproducible. The gradient is one pass over log_prob.
#include <cmath>

#include <cub/cub.cuh>

#include "softmax_rows.cuh"

namespace memopt::cuda {
namespace {

constexpr int kReduceThreads = 1024;

/// Weight of sample i: 0 when its label is ignored, NaN when the label is out of range (the CPU
/// reports an error there), else weights[label] or 1. `label` gets the label.
template <typename L>
__device__ float SampleWeight(const LabelWeights& lw, int64_t i, int64_t classes, int64_t* label) {
  const int64_t y = static_cast<const L*>(lw.labels)[i];
  *label = y;
  if (lw.has_ignore && y == lw.ignore_index) return 0.0f;
  if (y < 0 || y >= classes) return NAN;
  return lw.weights != nullptr ? LoadAny(lw.weight_type, lw.weights, y) : 1.0f;
}

/// Finishes sample r of the forward (one thread): loss = -w * (score(y) - lse) for label y (0 when
/// ignored, NaN when out of range), stored (kNone) or staged in scratch with its weight.
template <typename L, typename Score>
__device__ void FinishSample(const SceLossArgs& a, int64_t r, int64_t rows, float lse, Score&& score) {
  const int64_t classes = a.shape.len;
  int64_t y = 0;
  const float w = SampleWeight<L>(a.lw, r, classes, &y);
  const bool ignored = a.lw.has_ignore && y == a.lw.ignore_index;
  float loss = 0.0f;
  if (!ignored) loss = y >= 0 && y < classes ? -w * (score(y) - lse) : NAN;
  if (a.reduction == LossReduction::kNone) {
    StoreAny(a.out_type, a.loss, r, loss);
  } else {
    a.scratch[r] = loss;
    a.scratch[rows + r] = w;
  }
}

/// The gradient's factor of sample r, dY * w (kNone: dY per sample; kSum: scalar dY; kMean: scalar
/// dY * w / sum(w), 0 when the sum is 0), in double as on the CPU; `label` gets its label.
template <typename L>
__device__ float SampleGradFactor(const SceLossGradArgs& a, int64_t r, int64_t* label) {
  const double w = SampleWeight<L>(a.lw, r, a.shape.len, label);
  double dl;
  if (a.reduction == LossReduction::kNone) {
    dl = static_cast<double>(LoadAny(a.dy_type, a.dy, r)) * w;
  } else if (a.reduction == LossReduction::kSum) {
    dl = static_cast<double>(LoadAny(a.dy_type, a.dy, 0)) * w;
  } else {
    const double ws = *a.weight_sum;
    dl = ws == 0.0 ? 0.0 : static_cast<double>(LoadAny(a.dy_type, a.dy, 0)) * w / ws;
  }
  return static_cast<float>(dl);
}

template <typename T, typename L, int G>
__global__ void SceLossKernel(SceLossArgs a) {
  using E = Elem<T>;
  __shared__ float smem[32];
  const RowShape s = a.shape;
  const int64_t rows = s.outer * s.inner;
  const T* x = static_cast<const T*>(a.scores);
  for (int64_t r = FirstRow<G>(); r < rows; r += RowStep<G>()) {
    const T* xr = x + RowBase(s, r);
    float mx = -INFINITY;
    for (int64_t j = Lane<G>(); j < s.len; j += G) mx = fmaxf(mx, E::Load(xr[j * s.inner]));
    mx = GroupReduce<G>(mx, MaxOp{}, -INFINITY, smem);
    if (isinf(mx)) mx = 0.0f;  // the CPU's rule here: either infinity
    float sum = 0.0f;
    for (int64_t j = Lane<G>(); j < s.len; j += G) sum += expf(E::Load(xr[j * s.inner]) - mx);
    sum = GroupReduce<G>(sum, SumOp{}, 0.0f, smem);
    const float lse = mx + logf(sum);
    if (a.log_prob != nullptr) {
      const int64_t base = RowBase(s, r);
      for (int64_t j = Lane<G>(); j < s.len; j += G) {
        StoreAny(a.out_type, a.log_prob, base + j * s.inner, E::Load(xr[j * s.inner]) - lse);
      }
    }
    if (Lane<G>() == 0) FinishSample<L>(a, r, rows, lse, [&](int64_t y) { return E::Load(xr[y * s.inner]); });
  }
}

/// One block: the loss sum (and weight sum for the mean) of `m` samples into the scalar output.
__global__ void SceReduceKernel(const float* scratch, int64_t m, LossReduction reduction, ElemType out_type,
                                void* out) {
  using Reduce = cub::BlockReduce<double, kReduceThreads>;
  __shared__ typename Reduce::TempStorage tmp;
  double loss = 0.0, weight = 0.0;
  for (int64_t i = threadIdx.x; i < m; i += kReduceThreads) {
    loss += scratch[i];
    weight += scratch[m + i];
  }
  loss = Reduce(tmp).Sum(loss);
  __syncthreads();  // tmp is reused
  weight = Reduce(tmp).Sum(weight);
  if (threadIdx.x == 0) {
    double v = loss;
    if (reduction == LossReduction::kMean) v = weight != 0.0 ? loss / weight : NAN;
    StoreAny(out_type, out, 0, static_cast<float>(v));
  }
}

/// One block: sum(w) over `m` samples (the gradient's mean divisor).
template <typename L>
__global__ void WeightSumKernel(LabelWeights lw, int64_t m, int64_t classes, double* out) {
  using Reduce = cub::BlockReduce<double, kReduceThreads>;
  __shared__ typename Reduce::TempStorage tmp;
  double sum = 0.0;
  int64_t y = 0;
  for (int64_t i = threadIdx.x; i < m; i += kReduceThreads) sum += SampleWeight<L>(lw, i, classes, &y);
  sum = Reduce(tmp).Sum(sum);
  if (threadIdx.x == 0) *out = sum;
}

template <typename T, typename L, int G>
__global__ void SceLossGradKernel(SceLossGradArgs a) {
  using E = Elem<T>;
  const RowShape s = a.shape;
  const int64_t rows = s.outer * s.inner;
  const T* lp = static_cast<const T*>(a.log_prob);
  const T* bias = static_cast<const T*>(a.bias);
  for (int64_t r = FirstRow<G>(); r < rows; r += RowStep<G>()) {
    int64_t y = 0;
    const float d = SampleGradFactor<L>(a, r, &y);
    const int64_t base = RowBase(s, r);
    for (int64_t j = Lane<G>(); j < s.len; j += G) {
      const int64_t k = base + j * s.inner;
      float v = d * (expf(E::Load(lp[k])) - (j == y ? 1.0f : 0.0f));
      if (bias != nullptr) v += E::Load(bias[k]);
      StoreAny(a.out_type, a.dx, k, v);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The fast path for contiguous rows (inner == 1): a block per row. The forward keeps the row in
// shared memory, so the scores are read from device memory once; both directions move 16 bytes
// per access between the row's unaligned head and tail.

constexpr int kRowThreads = 512;

/// Elements before the first 16-byte boundary of a row starting at p (all of the row when !vec).
template <typename T>
__device__ inline int64_t HeadOf(const T* p, int64_t len, bool vec) {
  if (!vec) return len;
  const int64_t head = static_cast<int64_t>((16 - (reinterpret_cast<uintptr_t>(p) & 15)) & 15) / sizeof(T);
  return head < len ? head : len;
}

/// Calls f(i, value) for the row's head and tail elements and f_vec(k, pack) for its 16-byte
/// vectors k (elements head + k * N ..), four vectors' loads in flight per thread at a time. Each
/// thread visits the same elements on every call for the same row.
template <typename T, typename Scalar, typename Vector>
__device__ inline void ForRowElements(const T* row, int64_t len, int64_t head, Scalar&& f, Vector&& f_vec) {
  constexpr int N = 16 / static_cast<int>(sizeof(T));
  using V = VecN<T, N>;
  const int64_t nvec = (len - head) / N;
  const int64_t tail = head + nvec * N;
  const int t = static_cast<int>(threadIdx.x), b = static_cast<int>(blockDim.x);
  for (int64_t i = t; i < head; i += b) f(i, row[i]);
  const V* vrow = reinterpret_cast<const V*>(row + head);
  int64_t k = t;
  for (; k + 3 * b < nvec; k += 4 * b) {
    V v[4];
#pragma unroll
    for (int q = 0; q < 4; ++q) v[q] = vrow[k + q * b];
#pragma unroll
    for (int q = 0; q < 4; ++q) f_vec(k + q * b, v[q]);
  }
  for (; k < nvec; k += b) f_vec(k, vrow[k]);
  for (int64_t i = tail + t; i < len; i += b) f(i, row[i]);
}

/// `vec`: scores and log_prob 16-byte aligned (then their rows share the head). Dynamic shared
/// memory: (len + N) elements of T, the row at an offset that aligns its vectors.
template <typename T, typename L>
__global__ void __launch_bounds__(kRowThreads) SceLossRowKernel(SceLossArgs a, bool vec) {
  using E = Elem<T>;
  constexpr int N = 16 / static_cast<int>(sizeof(T));
  using V = VecN<T, N>;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  __shared__ float red[32];
  const int64_t len = a.shape.len, rows = a.shape.outer;
  const T* x = static_cast<const T*>(a.scores);
  T* lp = static_cast<T*>(a.log_prob);
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* xr = x + r * len;
    const int64_t head = HeadOf(xr, len, vec);
    // cache[head] is 16-byte aligned, as xr + head is.
    T* cache = reinterpret_cast<T*>(smem_raw) + (N - head % N) % N;
    V* vcache = reinterpret_cast<V*>(cache + head);
    float mx = -INFINITY;
    ForRowElements(
        xr, len, head,
        [&](int64_t i, T v) {
          cache[i] = v;
          mx = fmaxf(mx, E::Load(v));
        },
        [&](int64_t k, const V& v) {
          vcache[k] = v;
#pragma unroll
          for (int e = 0; e < N; ++e) mx = fmaxf(mx, E::Load(v.v[e]));
        });
    mx = GroupReduce<kRowThreads>(mx, MaxOp{}, -INFINITY, red);  // also orders the cache writes
    if (isinf(mx)) mx = 0.0f;  // the CPU's rule here: either infinity
    float sum = 0.0f;
    ForRowElements(
        static_cast<const T*>(cache), len, head, [&](int64_t, T v) { sum += expf(E::Load(v) - mx); },
        [&](int64_t, const V& v) {
#pragma unroll
          for (int e = 0; e < N; ++e) sum += expf(E::Load(v.v[e]) - mx);
        });
    sum = GroupReduce<kRowThreads>(sum, SumOp{}, 0.0f, red);
    const float lse = mx + logf(sum);
    if (lp != nullptr) {
      T* out = lp + r * len;
      V* vout = reinterpret_cast<V*>(out + head);
      ForRowElements(
          static_cast<const T*>(cache), len, head, [&](int64_t i, T v) { out[i] = E::Store(E::Load(v) - lse); },
          [&](int64_t k, const V& v) {
            V o;
#pragma unroll
            for (int e = 0; e < N; ++e) o.v[e] = E::Store(E::Load(v.v[e]) - lse);
            vout[k] = o;
          });
    }
    if (threadIdx.x == 0) FinishSample<L>(a, r, rows, lse, [&](int64_t y) { return E::Load(cache[y]); });
    __syncthreads();  // every read of this row's cache is done before the next row fills it
  }
}

/// dx = d * (exp(log_prob) - [j == label]) (+ bias) by a block per row; `vec`: log_prob, bias
/// and dx 16-byte aligned.
template <typename T, typename L>
__global__ void __launch_bounds__(kThreads) SceLossGradRowKernel(SceLossGradArgs a, bool vec) {
  using E = Elem<T>;
  constexpr int N = 16 / static_cast<int>(sizeof(T));
  using V = VecN<T, N>;
  __shared__ float row_d;
  __shared__ int64_t row_label;
  const int64_t len = a.shape.len, rows = a.shape.outer;
  const T* lp = static_cast<const T*>(a.log_prob);
  const T* bias = static_cast<const T*>(a.bias);
  T* dx = static_cast<T*>(a.dx);
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    if (threadIdx.x == 0) {
      int64_t y = 0;
      row_d = SampleGradFactor<L>(a, r, &y);
      row_label = y;
    }
    __syncthreads();
    const float d = row_d;
    const int64_t y = row_label;
    const int64_t base = r * len;
    const T* in = lp + base;
    const T* bias_row = bias != nullptr ? bias + base : nullptr;
    T* out = dx + base;
    const int64_t head = HeadOf(in, len, vec);
    V* vout = reinterpret_cast<V*>(out + head);
    const auto value = [&](int64_t j, float l) {
      float v = d * (expf(l) - (j == y ? 1.0f : 0.0f));
      if (bias_row != nullptr) v += E::Load(bias_row[j]);
      return v;
    };
    ForRowElements(
        in, len, head, [&](int64_t j, T l) { out[j] = E::Store(value(j, E::Load(l))); },
        [&](int64_t k, const V& l) {
          const int64_t j0 = head + k * N;
          float b[N];
          if (bias_row != nullptr) LoadFloats<T, N>(bias_row + j0, b);
          V o;
#pragma unroll
          for (int e = 0; e < N; ++e) {
            float v = d * (expf(E::Load(l.v[e])) - (j0 + e == y ? 1.0f : 0.0f));
            if (bias_row != nullptr) v += b[e];
            o.v[e] = E::Store(v);
          }
          vout[k] = o;
        });
    __syncthreads();  // row_d and row_label are rewritten for the next row
  }
}

/// Whether the row kernels take a launch: contiguous rows whose outputs have the scores' type,
/// and for the forward a row that fits in shared memory (`smem` gets its bytes).
template <typename T>
bool RowPathFits(const RowShape& s, ElemType t, ElemType out_type, bool has_out, size_t* smem) {
  if (s.inner != 1 || s.len == 0 || (has_out && out_type != t)) return false;
  constexpr int N = 16 / static_cast<int>(sizeof(T));
  if (smem == nullptr) return true;
  int device = 0, limit = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, device) != cudaSuccess) {
    return false;
  }
  const int64_t bytes = (s.len + N) * static_cast<int64_t>(sizeof(T));
  if (bytes > limit - static_cast<int64_t>(64 * sizeof(float))) return false;  // static shared memory too
  *smem = static_cast<size_t>(bytes);
  return true;
}

unsigned RowGrid(int64_t rows) { return static_cast<unsigned>(rows < (1 << 20) ? rows : (1 << 20)); }

template <typename T, typename L>
cudaError_t SceLoss(const SceLossArgs& a, cudaStream_t st) {
  const int64_t rows = a.shape.rows();
  size_t smem = 0;
  if (rows > 0 && RowPathFits<T>(a.shape, a.scores_type, a.out_type, a.log_prob != nullptr, &smem)) {
    if (smem > 48 * 1024) {
      const cudaError_t err = cudaFuncSetAttribute(SceLossRowKernel<T, L>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                   static_cast<int>(smem));
      if (err != cudaSuccess) return err;
    }
    const bool vec = AlignedTo(16, {a.scores, a.log_prob});
    SceLossRowKernel<T, L><<<RowGrid(rows), kRowThreads, smem, st>>>(a, vec);
  } else if (rows > 0) {
    ForRowGroup(a.shape, [&](auto g) {
      constexpr int G = decltype(g)::value;
      SceLossKernel<T, L, G><<<RowBlocks(rows, G), kThreads, 0, st>>>(a);
    });
  }
  if (a.reduction != LossReduction::kNone) {
    SceReduceKernel<<<1, kReduceThreads, 0, st>>>(a.scratch, rows, a.reduction, a.out_type, a.loss);
  }
  return cudaGetLastError();
}

template <typename T, typename L>
cudaError_t SceLossGrad(const SceLossGradArgs& a, cudaStream_t st) {
  const int64_t rows = a.shape.rows();
  if (a.reduction == LossReduction::kMean) {
    WeightSumKernel<L><<<1, kReduceThreads, 0, st>>>(a.lw, rows, a.shape.len, a.weight_sum);
  }
  if (rows > 0 && RowPathFits<T>(a.shape, a.log_prob_type, a.out_type, true, nullptr)) {
    const bool vec = AlignedTo(16, {a.log_prob, a.bias, a.dx});
    SceLossGradRowKernel<T, L><<<RowGrid(rows), kThreads, 0, st>>>(a, vec);
  } else if (rows > 0 && a.shape.len > 0) {
    ForRowGroup(a.shape, [&](auto g) {
      constexpr int G = decltype(g)::value;
      SceLossGradKernel<T, L, G><<<RowBlocks(rows, G), kThreads, 0, st>>>(a);
    });
  }
  return cudaGetLastError();
}

/// f(T{}, L{}) for the float type t and the label type lt; false when either is unsupported.
template <typename F>
bool DispatchScoresLabels(ElemType t, ElemType lt, F&& f) {
  auto with_t = [&](auto tag) {
    if (lt == ElemType::kI32) return f(tag, int32_t{}), true;
    if (lt == ElemType::kI64) return f(tag, int64_t{}), true;
    return false;
  };
  switch (t) {
    case ElemType::kF32: return with_t(float{});
    case ElemType::kF16: return with_t(F16{});
    case ElemType::kBF16: return with_t(BF16{});
    default: return false;
  }
}

}  // namespace

cudaError_t LaunchSceLoss(const SceLossArgs& a, cudaStream_t stream) {
  cudaError_t err = cudaErrorInvalidValue;
  DispatchScoresLabels(a.scores_type, a.lw.label_type, [&](auto t, auto l) {
    err = SceLoss<decltype(t), decltype(l)>(a, stream);
  });
  return err;
}

cudaError_t LaunchSceLossGrad(const SceLossGradArgs& a, cudaStream_t stream) {
  cudaError_t err = cudaErrorInvalidValue;
  DispatchScoresLabels(a.log_prob_type, a.lw.label_type, [&](auto t, auto l) {
    err = SceLossGrad<decltype(t), decltype(l)>(a, stream);
  });
  return err;
}

}  // namespace memopt::cuda
