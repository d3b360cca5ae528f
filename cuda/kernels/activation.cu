// Relu and the Gelu family (ONNX Gelu, com.microsoft Gelu/FastGelu/BiasGelu) and their gradients
// (GeluGrad, FastGeluGrad, BiasGeluGrad_dX, BiasFastGeluGrad_dX). The math is the MEMOPT_HD code
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

template <typename T, typename F>
__global__ void ActivationKernel(F f, const T* x, const T* bias, int64_t nbias, T* y, int64_t n) {
  using E = Elem<T>;
  MEMOPT_GRID_STRIDE(i, n) {
    float v = E::Load(x[i]);
    if (bias != nullptr) v += E::Load(bias[i % nbias]);
    y[i] = E::Store(f(v));
  }
}

template <typename T, typename F>
__global__ void GradKernel(F f, const T* dy, const T* x, const T* bias, int64_t nbias, T* dx, int64_t n) {
  using E = Elem<T>;
  MEMOPT_GRID_STRIDE(i, n) {
    float v = E::Load(x[i]);
    if (bias != nullptr) v += E::Load(bias[i % nbias]);
    dx[i] = E::Store(f(E::Load(dy[i]), v));
  }
}

template <typename T, typename F>
cudaError_t LaunchUnary(F f, const void* x, const void* bias, int64_t nbias, void* y, int64_t n, cudaStream_t s) {
  if (n == 0) return cudaSuccess;
  ActivationKernel<T><<<BlocksFor(n), kThreads, 0, s>>>(f, static_cast<const T*>(x), static_cast<const T*>(bias),
                                                         nbias, static_cast<T*>(y), n);
  return cudaGetLastError();
}

template <typename F>
cudaError_t DispatchUnary(F f, ElemType t, const void* x, const void* bias, int64_t nbias, void* y, int64_t n,
                          cudaStream_t s) {
  switch (t) {
    case ElemType::kF32: return LaunchUnary<float>(f, x, bias, nbias, y, n, s);
    case ElemType::kF16: return LaunchUnary<F16>(f, x, bias, nbias, y, n, s);
    case ElemType::kBF16: return LaunchUnary<BF16>(f, x, bias, nbias, y, n, s);
    default: return cudaErrorInvalidValue;
  }
}

template <typename T, typename F>
cudaError_t LaunchGrad(F f, const void* dy, const void* x, const void* bias, int64_t nbias, void* dx, int64_t n,
                       cudaStream_t s) {
  if (n == 0) return cudaSuccess;
  GradKernel<T><<<BlocksFor(n), kThreads, 0, s>>>(f, static_cast<const T*>(dy), static_cast<const T*>(x),
                                                   static_cast<const T*>(bias), nbias, static_cast<T*>(dx), n);
  return cudaGetLastError();
}

template <typename F>
cudaError_t DispatchGrad(F f, ElemType t, const void* dy, const void* x, const void* bias, int64_t nbias, void* dx,
                         int64_t n, cudaStream_t s) {
  switch (t) {
    case ElemType::kF32: return LaunchGrad<float>(f, dy, x, bias, nbias, dx, n, s);
    case ElemType::kF16: return LaunchGrad<F16>(f, dy, x, bias, nbias, dx, n, s);
    case ElemType::kBF16: return LaunchGrad<BF16>(f, dy, x, bias, nbias, dx, n, s);
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
  }
  return cudaErrorInvalidValue;
}

}  // namespace memopt::cuda
