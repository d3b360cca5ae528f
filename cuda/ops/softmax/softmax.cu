// Device code of softmax.cc: Softmax, LogSoftmax and BiasSoftmax (three passes over a row:
// max, sum of exponentials, write; in float like the CPU) and their gradients (one row sum, in
// double like the CPU, then the write pass). Row layout and group sizes: softmax_rows.cuh.
// Contiguous rows of up to 1024 half-precision elements (attention scores) take the packed kernels:
// the row read once in 16-byte accesses into registers, the same arithmetic.
#include <cmath>

#include "softmax_rows.cuh"

namespace memopt::cuda {
namespace {

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

template <typename T, int G>
__global__ void SoftmaxGradKernel(SoftmaxKind kind, const T* dy, const T* y, T* dx, RowShape s) {
  using E = Elem<T>;
  __shared__ double smem[32];
  const int64_t rows = s.outer * s.inner;
  const bool log = kind == SoftmaxKind::kLogSoftmax;
  for (int64_t r = FirstRow<G>(); r < rows; r += RowStep<G>()) {
    const int64_t base = RowBase(s, r);
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

/// Packs a lane of the packed kernels holds: contiguous rows of up to 32 * 4 Packs (1024 float16 or
/// bfloat16, 512 float) live in registers, read in 16-byte accesses once.
constexpr int kPacksPerLane = 4;

/// The packed kernels apply: warp rows, contiguous, whole Packs, 16-byte aligned.
template <typename T>
bool PackedRows(const RowShape& s, std::initializer_list<const void*> ptrs) {
  if (PickRowGroup(s) != RowGroup::kWarp || s.inner != 1 || s.len % kPack<T> != 0) return false;
  return s.len <= 32 * kPack<T> * kPacksPerLane && Aligned16(ptrs);
}

/// Calls f(c, q) for the Packs q = lane + 32 c (c < kPacksPerLane, unrolled) of a row of `packs`.
template <typename F>
__device__ void ForLanePacks(int64_t packs, const F& f) {
  const int lane = Lane<32>();
#pragma unroll
  for (int c = 0; c < kPacksPerLane; ++c) {
    const int64_t q = lane + 32 * c;
    if (q < packs) f(c, q);
  }
}

/// SoftmaxKernel for PackedRows: a lane holds Packs lane, lane + 32, ... of the row.
template <typename T>
__global__ void SoftmaxPackedKernel(SoftmaxKind kind, const T* x, SoftmaxBias bias, T* y, RowShape s) {
  using E = Elem<T>;
  using P = Pack<T>;
  constexpr int N = kPack<T>;
  const int64_t packs = s.len / N;
  const T* b = static_cast<const T*>(bias.data);
  const bool soft = kind == SoftmaxKind::kSoftmax;
  for (int64_t r = FirstRow<32>(); r < s.outer; r += RowStep<32>()) {
    const P* xr = reinterpret_cast<const P*>(x + r * s.len);
    P* yr = reinterpret_cast<P*>(y + r * s.len);
    const P* br = nullptr;
    if (b != nullptr) {
      br = reinterpret_cast<const P*>(b + (bias.inner_broadcast ? r / bias.repeat : r % bias.bias_rows) * s.len);
    }
    float v[kPacksPerLane][N];
    float mx = -INFINITY;
    ForLanePacks(packs, [&](int c, int64_t q) {
      const P px = xr[q];
      P pb{};
      if (br != nullptr) pb = br[q];
#pragma unroll
      for (int k = 0; k < N; ++k) {
        float t = E::Load(px.v[k]);
        if (br != nullptr) t += E::Load(pb.v[k]);  // (not + 0.0f, which would turn -0 into +0)
        v[c][k] = t;
        mx = fmaxf(mx, t);
      }
    });
    mx = GroupReduce<32>(mx, MaxOp{}, -INFINITY, static_cast<float*>(nullptr));
    if (mx == -INFINITY) mx = 0.0f;  // as SoftmaxKernel
    float sum = 0.0f;
    ForLanePacks(packs, [&](int c, int64_t) {
#pragma unroll
      for (int k = 0; k < N; ++k) {
        const float e = expf(v[c][k] - mx);
        sum += e;
        if (soft) v[c][k] = e;
      }
    });
    sum = GroupReduce<32>(sum, SumOp{}, 0.0f, static_cast<float*>(nullptr));
    const float inv = 1.0f / sum, lse = mx + logf(sum);
    ForLanePacks(packs, [&](int c, int64_t q) {
      P out;
#pragma unroll
      for (int k = 0; k < N; ++k) out.v[k] = E::Store(soft ? v[c][k] * inv : v[c][k] - lse);
      yr[q] = out;
    });
  }
}

/// SoftmaxGradKernel for PackedRows.
template <typename T>
__global__ void SoftmaxGradPackedKernel(SoftmaxKind kind, const T* dy, const T* y, T* dx, RowShape s) {
  using E = Elem<T>;
  using P = Pack<T>;
  constexpr int N = kPack<T>;
  const int64_t packs = s.len / N;
  const bool log = kind == SoftmaxKind::kLogSoftmax;
  for (int64_t r = FirstRow<32>(); r < s.outer; r += RowStep<32>()) {
    const P* dyr = reinterpret_cast<const P*>(dy + r * s.len);
    const P* yr = reinterpret_cast<const P*>(y + r * s.len);
    P* dxr = reinterpret_cast<P*>(dx + r * s.len);
    P g[kPacksPerLane], v[kPacksPerLane];
    double sum = 0.0;
    ForLanePacks(packs, [&](int c, int64_t q) {
      g[c] = dyr[q];
      v[c] = yr[q];
#pragma unroll
      for (int k = 0; k < N; ++k) {
        const double gk = E::Load(g[c].v[k]);
        sum += log ? gk : gk * static_cast<double>(E::Load(v[c].v[k]));
      }
    });
    sum = GroupReduce<32>(sum, SumOp{}, 0.0, static_cast<double*>(nullptr));
    const float sf = static_cast<float>(sum);
    ForLanePacks(packs, [&](int c, int64_t q) {
      P out;
#pragma unroll
      for (int k = 0; k < N; ++k) {
        const float gk = E::Load(g[c].v[k]), vk = E::Load(v[c].v[k]);
        out.v[k] = E::Store(log ? gk - expf(vk) * sf : vk * (gk - sf));
      }
      dxr[q] = out;
    });
  }
}

template <typename T>
cudaError_t Softmax(SoftmaxKind kind, const void* x, const SoftmaxBias* bias, void* y, RowShape s, cudaStream_t st) {
  const SoftmaxBias b = bias != nullptr ? *bias : SoftmaxBias{};
  if (PackedRows<T>(s, {x, y, b.data})) {
    SoftmaxPackedKernel<T><<<RowBlocks(s.rows(), 32), kThreads, 0, st>>>(kind, static_cast<const T*>(x), b,
                                                                        static_cast<T*>(y), s);
    return cudaGetLastError();
  }
  ForRowGroup(s, [&](auto g) {
    constexpr int G = decltype(g)::value;
    SoftmaxKernel<T, G><<<RowBlocks(s.rows(), G), kThreads, 0, st>>>(kind, static_cast<const T*>(x), b,
                                                                       static_cast<T*>(y), s);
  });
  return cudaGetLastError();
}

template <typename T>
cudaError_t SoftmaxGrad(SoftmaxKind kind, const void* dy, const void* y, void* dx, RowShape s, cudaStream_t st) {
  if (PackedRows<T>(s, {dy, y, dx})) {
    SoftmaxGradPackedKernel<T><<<RowBlocks(s.rows(), 32), kThreads, 0, st>>>(
        kind, static_cast<const T*>(dy), static_cast<const T*>(y), static_cast<T*>(dx), s);
    return cudaGetLastError();
  }
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
