// Relu and the Gelu family (ONNX Gelu, com.microsoft Gelu/FastGelu/BiasGelu) and their gradients
// (ReluGrad, GeluGrad, FastGeluGrad, BiasGeluGrad_dX, BiasFastGeluGrad_dX). The math is the MEMOPT_HD code
// of exec/math/activation_math.h, shared with the CPU reference kernels, in float.
#include "common.cuh"
#include "exec/math/activation_math.h"

namespace memopt::cuda {
namespace {

struct ReluF {
  __device__ float operator()(float x) const { return x > 0.0f ? x : 0.0f; }
};
struct GeluF {
  __device__ float operator()(float x) const { return math::GeluValue(x); }
};
// ONNX Gelu(approximate="tanh"): the formula of the CPU kernel (elementwise_unary.cc).
struct GeluTanhF {
  __device__ float operator()(float x) const {
    const float k = 0.7978845608028654f;  // sqrt(2 / pi)
    return 0.5f * x * (1.0f + tanhf(k * (x + 0.044715f * x * x * x)));
  }
};
struct FastGeluF {
  __device__ float operator()(float x) const { return math::FastGeluValue(x); }
};
struct GeluGradF {
  __device__ float operator()(float dy, float x) const { return math::GeluGradValue(dy, x); }
};
struct FastGeluGradF {
  __device__ float operator()(float dy, float x) const { return math::FastGeluGradValue(dy, x); }
};
// com.microsoft ReluGrad(dY, X): the CPU kernel's rule, dY where X > 0, else 0.
struct ReluGradF {
  __device__ float operator()(float dy, float x) const { return x > 0.0f ? dy : 0.0f; }
};

/// f(v) for the activations, f(dy, v) for their gradients (dy is then non-null).
template <bool kGrad, typename F>
__device__ float Call(const F& f, float dy, float v) {
  if constexpr (kGrad) {
    return f(dy, v);
  } else {
    (void)dy;
    return f(v);
  }
}

/// Elements [begin, n): all of them, or the tail after ActivationPacked. v = x (+ bias).
template <bool kGrad, typename T, typename F>
__global__ void ActivationKernel(F f, const T* dy, const T* x, const T* bias, int64_t nbias, T* y, int64_t begin,
                                 int64_t n) {
  using E = Elem<T>;
  MEMOPT_GRID_STRIDE_FROM(i, begin, n) {
    float v = E::Load(x[i]);
    if (bias != nullptr) v += E::Load(bias[i % nbias]);
    y[i] = E::Store(Call<kGrad>(f, kGrad ? E::Load(dy[i]) : 0.0f, v));
  }
}

/// A Pack of elements per thread; the bias (nbias a multiple of the Pack) is one Pack too.
template <bool kGrad, typename T, typename F>
__global__ void ActivationPacked(F f, const T* dy, const T* x, const T* bias, int64_t nbias, T* y, int64_t packs) {
  using E = Elem<T>;
  using P = Pack<T>;
  MEMOPT_GRID_STRIDE(p, packs) {
    const P px = reinterpret_cast<const P*>(x)[p];
    P pdy{}, pb{};
    if constexpr (kGrad) pdy = reinterpret_cast<const P*>(dy)[p];
    if (bias != nullptr) pb = *reinterpret_cast<const P*>(bias + (p * kPack<T>) % nbias);
    P out;
#pragma unroll
    for (int k = 0; k < kPack<T>; ++k) {
      float v = E::Load(px.v[k]);
      if (bias != nullptr) v += E::Load(pb.v[k]);
      out.v[k] = E::Store(Call<kGrad>(f, kGrad ? E::Load(pdy.v[k]) : 0.0f, v));
    }
    reinterpret_cast<P*>(y)[p] = out;
  }
}

/// y = f(x (+ bias)), or with kGrad dx = f(dy, x (+ bias)): packed, then the scalar tail.
template <bool kGrad, typename T, typename F>
cudaError_t LaunchElementwise(F f, const void* dy, const void* x, const void* bias, int64_t nbias, void* y, int64_t n,
                              cudaStream_t s) {
  if (n == 0) return cudaSuccess;
  const auto* pdy = static_cast<const T*>(dy);
  const auto* px = static_cast<const T*>(x);
  const auto* pb = static_cast<const T*>(bias);
  auto* py = static_cast<T*>(y);
  // A bias row must hold whole Packs.
  const int64_t packs = bias == nullptr || nbias % kPack<T> == 0 ? PacksFor<T>(n, {bias, dy, x, y}) : 0;
  const int64_t done = packs * kPack<T>;
  if (packs > 0) ActivationPacked<kGrad, T><<<BlocksFor(packs), kThreads, 0, s>>>(f, pdy, px, pb, nbias, py, packs);
  if (done < n) ActivationKernel<kGrad, T><<<BlocksFor(n - done), kThreads, 0, s>>>(f, pdy, px, pb, nbias, py, done, n);
  return cudaGetLastError();
}

template <typename F>
cudaError_t DispatchUnary(F f, ElemType t, const void* x, const void* bias, int64_t nbias, void* y, int64_t n,
                          cudaStream_t s) {
  switch (t) {
    case ElemType::kF32: return LaunchElementwise<false, float>(f, nullptr, x, bias, nbias, y, n, s);
    case ElemType::kF16: return LaunchElementwise<false, F16>(f, nullptr, x, bias, nbias, y, n, s);
    case ElemType::kBF16: return LaunchElementwise<false, BF16>(f, nullptr, x, bias, nbias, y, n, s);
    default: return cudaErrorInvalidValue;
  }
}

template <typename F>
cudaError_t DispatchGrad(F f, ElemType t, const void* dy, const void* x, const void* bias, int64_t nbias, void* dx,
                         int64_t n, cudaStream_t s) {
  switch (t) {
    case ElemType::kF32: return LaunchElementwise<true, float>(f, dy, x, bias, nbias, dx, n, s);
    case ElemType::kF16: return LaunchElementwise<true, F16>(f, dy, x, bias, nbias, dx, n, s);
    case ElemType::kBF16: return LaunchElementwise<true, BF16>(f, dy, x, bias, nbias, dx, n, s);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace

cudaError_t LaunchActivation(Activation f, ElemType t, const void* x, const void* bias, int64_t nbias, void* y,
                             int64_t n, cudaStream_t stream) {
  switch (f) {
    case Activation::kRelu: return DispatchUnary(ReluF{}, t, x, bias, nbias, y, n, stream);
    case Activation::kGelu: return DispatchUnary(GeluF{}, t, x, bias, nbias, y, n, stream);
    case Activation::kGeluTanh: return DispatchUnary(GeluTanhF{}, t, x, bias, nbias, y, n, stream);
    case Activation::kFastGelu: return DispatchUnary(FastGeluF{}, t, x, bias, nbias, y, n, stream);
  }
  return cudaErrorInvalidValue;
}

cudaError_t LaunchActivationGrad(ActivationGrad f, ElemType t, const void* dy, const void* x, const void* bias,
                                 int64_t nbias, void* dx, int64_t n, cudaStream_t stream) {
  switch (f) {
    case ActivationGrad::kGeluGrad: return DispatchGrad(GeluGradF{}, t, dy, x, bias, nbias, dx, n, stream);
    case ActivationGrad::kFastGeluGrad: return DispatchGrad(FastGeluGradF{}, t, dy, x, bias, nbias, dx, n, stream);
    case ActivationGrad::kReluGrad: return DispatchGrad(ReluGradF{}, t, dy, x, bias, nbias, dx, n, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace memopt::cuda
