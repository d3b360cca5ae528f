// Device code of the softmax cross-entropy ops of softmax.cc. The forward pass is a
// log-softmax over the class axis per sample (in float, as the CPU), writing log_prob and the
// sample's loss; sum/mean then sum the per-sample losses and weights in one block, in double and
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
    if (Lane<G>() == 0) {
      int64_t y = 0;
      const float w = SampleWeight<L>(a.lw, r, s.len, &y);
      const bool ignored = a.lw.has_ignore && y == a.lw.ignore_index;
      float loss = 0.0f;
      if (!ignored) loss = y >= 0 && y < s.len ? -w * (E::Load(xr[y * s.inner]) - lse) : NAN;
      if (a.reduction == LossReduction::kNone) {
        StoreAny(a.out_type, a.loss, r, loss);
      } else {
        a.scratch[r] = loss;
        a.scratch[rows + r] = w;
      }
    }
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
    const double w = SampleWeight<L>(a.lw, r, s.len, &y);
    double dl;
    if (a.reduction == LossReduction::kNone) {
      dl = static_cast<double>(LoadAny(a.dy_type, a.dy, r)) * w;
    } else if (a.reduction == LossReduction::kSum) {
      dl = static_cast<double>(LoadAny(a.dy_type, a.dy, 0)) * w;
    } else {
      const double ws = *a.weight_sum;
      dl = ws == 0.0 ? 0.0 : static_cast<double>(LoadAny(a.dy_type, a.dy, 0)) * w / ws;
    }
    const float d = static_cast<float>(dl);
    const int64_t base = RowBase(s, r);
    for (int64_t j = Lane<G>(); j < s.len; j += G) {
      const int64_t k = base + j * s.inner;
      float v = d * (expf(E::Load(lp[k])) - (j == y ? 1.0f : 0.0f));
      if (bias != nullptr) v += E::Load(bias[k]);
      StoreAny(a.out_type, a.dx, k, v);
    }
  }
}

template <typename T, typename L>
cudaError_t SceLoss(const SceLossArgs& a, cudaStream_t st) {
  const int64_t rows = a.shape.rows();
  if (rows > 0) {
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
  if (rows > 0 && a.shape.len > 0) {
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
