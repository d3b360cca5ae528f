// Device code of kernels/softmax.cc: Softmax, LogSoftmax and BiasSoftmax (three passes over a row:
// max, sum of exponentials, write; in float like the CPU) and their gradients (one row sum, in
// double like the CPU, then the write pass). Row layout and group sizes: softmax_rows.cuh.
#include <cmath>

#include "softmax_rows.cuh"

namespace memopt::cuda {
namespace {

/// Elements a lane keeps in registers: a warp holds rows of up to 32 * 32 in one read.
constexpr int kCachedPerLane = 32;

/// A contiguous row of a warp (len <= 32 * kCachedPerLane) read once into registers, then the
/// uncached path's arithmetic in its order: the same max, the same lane sums, the same outputs.
template <typename T, typename At>
__device__ void CachedRow(SoftmaxKind kind, const At& at, T* yr, int64_t len) {
  using E = Elem<T>;
  const int lane = Lane<32>();
  float v[kCachedPerLane];
  float mx = -INFINITY;
#pragma unroll
  for (int k = 0; k < kCachedPerLane; ++k) {
    const int64_t j = lane + 32 * k;
    v[k] = j < len ? at(j) : -INFINITY;
    mx = fmaxf(mx, v[k]);
  }
  mx = GroupReduce<32>(mx, MaxOp{}, -INFINITY, static_cast<float*>(nullptr));
  if (mx == -INFINITY) mx = 0.0f;
  float sum = 0.0f;
  const bool soft = kind == SoftmaxKind::kSoftmax;
#pragma unroll
  for (int k = 0; k < kCachedPerLane; ++k) {
    if (lane + 32 * k < len) {
      const float e = expf(v[k] - mx);
      sum += e;
      if (soft) v[k] = e;
    }
  }
  sum = GroupReduce<32>(sum, SumOp{}, 0.0f, static_cast<float*>(nullptr));
  const float inv = 1.0f / sum, lse = mx + logf(sum);
#pragma unroll
  for (int k = 0; k < kCachedPerLane; ++k) {
    const int64_t j = lane + 32 * k;
    if (j < len) yr[j] = E::Store(soft ? v[k] * inv : v[k] - lse);
  }
}

template <typename T, int G>
__global__ void SoftmaxKernel(SoftmaxKind kind, const T* x, SoftmaxBias bias, T* y, RowShape s) {
  using E = Elem<T>;
  __shared__ float smem[32];
  const int64_t rows = s.outer * s.inner;
  const T* b = static_cast<const T*>(bias.data);
  for (int64_t r = FirstRow<G>(); r < rows; r += RowStep<G>()) {
    const int64_t base = RowBase(s, r);
    const T* xr = x + base;
    T* yr = y + base;
    const T* br = nullptr;  // BiasSoftmax rows are contiguous (inner == 1)
    if (b != nullptr) br = b + (bias.inner_broadcast ? r / bias.repeat : r % bias.bias_rows) * s.len;
    auto at = [&](int64_t j) {
      float v = E::Load(xr[j * s.inner]);
      if (br != nullptr) v += E::Load(br[j]);
      return v;
    };
    if constexpr (G == 32) {
      if (s.inner == 1 && s.len <= 32 * kCachedPerLane) {
        CachedRow(kind, at, yr, s.len);
        continue;
      }
    }
    float mx = -INFINITY;
    for (int64_t j = Lane<G>(); j < s.len; j += G) mx = fmaxf(mx, at(j));
    mx = GroupReduce<G>(mx, MaxOp{}, -INFINITY, smem);
    if (mx == -INFINITY) mx = 0.0f;  // every value -inf (or NaN): avoid inf - inf, as the CPU
    float sum = 0.0f;
    for (int64_t j = Lane<G>(); j < s.len; j += G) sum += expf(at(j) - mx);
    sum = GroupReduce<G>(sum, SumOp{}, 0.0f, smem);
    if (kind == SoftmaxKind::kSoftmax) {
      const float inv = 1.0f / sum;
      for (int64_t j = Lane<G>(); j < s.len; j += G) yr[j * s.inner] = E::Store(expf(at(j) - mx) * inv);
    } else {
      const float lse = mx + logf(sum);
      for (int64_t j = Lane<G>(); j < s.len; j += G) yr[j * s.inner] = E::Store(at(j) - lse);
    }
  }
}

/// SoftmaxGradKernel's arithmetic for a contiguous warp row, dY and Y read once into registers.
template <typename T>
__device__ void CachedGradRow(bool log, const T* dy, const T* y, T* dx, int64_t len) {
  using E = Elem<T>;
  const int lane = Lane<32>();
  float g[kCachedPerLane], v[kCachedPerLane];
  double sum = 0.0;
#pragma unroll
  for (int k = 0; k < kCachedPerLane; ++k) {
    const int64_t j = lane + 32 * k;
    g[k] = j < len ? E::Load(dy[j]) : 0.0f;
    v[k] = j < len ? E::Load(y[j]) : 0.0f;
    if (j < len) sum += log ? static_cast<double>(g[k]) : static_cast<double>(g[k]) * static_cast<double>(v[k]);
  }
  sum = GroupReduce<32>(sum, SumOp{}, 0.0, static_cast<double*>(nullptr));
  const float sf = static_cast<float>(sum);
#pragma unroll
  for (int k = 0; k < kCachedPerLane; ++k) {
    const int64_t j = lane + 32 * k;
    if (j < len) dx[j] = E::Store(log ? g[k] - expf(v[k]) * sf : v[k] * (g[k] - sf));
  }
}

template <typename T, int G>
__global__ void SoftmaxGradKernel(SoftmaxKind kind, const T* dy, const T* y, T* dx, RowShape s) {
  using E = Elem<T>;
  __shared__ double smem[32];
  const int64_t rows = s.outer * s.inner;
  const bool log = kind == SoftmaxKind::kLogSoftmax;
  for (int64_t r = FirstRow<G>(); r < rows; r += RowStep<G>()) {
    const int64_t base = RowBase(s, r);
    if constexpr (G == 32) {
      if (s.inner == 1 && s.len <= 32 * kCachedPerLane) {
        CachedGradRow(log, dy + base, y + base, dx + base, s.len);
        continue;
      }
    }
    double sum = 0.0;
    for (int64_t j = Lane<G>(); j < s.len; j += G) {
      const int64_t k = base + j * s.inner;
      const double g = E::Load(dy[k]);
      sum += log ? g : g * static_cast<double>(E::Load(y[k]));
    }
    sum = GroupReduce<G>(sum, SumOp{}, 0.0, smem);
    const float sf = static_cast<float>(sum);
    for (int64_t j = Lane<G>(); j < s.len; j += G) {
      const int64_t k = base + j * s.inner;
      const float g = E::Load(dy[k]), v = E::Load(y[k]);
      dx[k] = E::Store(log ? g - expf(v) * sf : v * (g - sf));
    }
  }
}

template <typename T>
cudaError_t Softmax(SoftmaxKind kind, const void* x, const SoftmaxBias* bias, void* y, RowShape s, cudaStream_t st) {
  const SoftmaxBias b = bias != nullptr ? *bias : SoftmaxBias{};
  ForRowGroup(s, [&](auto g) {
    constexpr int G = decltype(g)::value;
    SoftmaxKernel<T, G><<<RowBlocks(s.rows(), G), kThreads, 0, st>>>(kind, static_cast<const T*>(x), b,
                                                                       static_cast<T*>(y), s);
  });
  return cudaGetLastError();
}

template <typename T>
cudaError_t SoftmaxGrad(SoftmaxKind kind, const void* dy, const void* y, void* dx, RowShape s, cudaStream_t st) {
  ForRowGroup(s, [&](auto g) {
    constexpr int G = decltype(g)::value;
    SoftmaxGradKernel<T, G><<<RowBlocks(s.rows(), G), kThreads, 0, st>>>(
        kind, static_cast<const T*>(dy), static_cast<const T*>(y), static_cast<T*>(dx), s);
  });
  return cudaGetLastError();
}

}  // namespace

cudaError_t LaunchSoftmax(SoftmaxKind kind, ElemType t, const void* x, const SoftmaxBias* bias, void* y,
                          RowShape shape, cudaStream_t stream) {
  if (shape.rows() == 0 || shape.len == 0) return cudaSuccess;
  switch (t) {
    case ElemType::kF32: return Softmax<float>(kind, x, bias, y, shape, stream);
    case ElemType::kF16: return Softmax<F16>(kind, x, bias, y, shape, stream);
    case ElemType::kBF16: return Softmax<BF16>(kind, x, bias, y, shape, stream);
    default: return cudaErrorInvalidValue;
  }
}

cudaError_t LaunchSoftmaxGrad(SoftmaxKind kind, ElemType t, const void* dy, const void* y, void* dx, RowShape shape,
                              cudaStream_t stream) {
  if (shape.rows() == 0 || shape.len == 0) return cudaSuccess;
  switch (t) {
    case ElemType::kF32: return SoftmaxGrad<float>(kind, dy, y, dx, shape, stream);
    case ElemType::kF16: return SoftmaxGrad<F16>(kind, dy, y, dx, shape, stream);
    case ElemType::kBF16: return SoftmaxGrad<BF16>(kind, dy, y, dx, shape, stream);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace memopt::cuda
