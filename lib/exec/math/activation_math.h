// Scalar math of the Gelu family and its gradients (docs: ort_training_ops.md sections 2.1-2.4,
// 3.1-3.6), shared by the CPU reference kernels and the CUDA kernels (see host_device.h). C is the
// compute type: float for float/float16/bfloat16 tensors, double for float64.
#pragma once

#include <cmath>

#include "exec/math/host_device.h"

namespace memopt::math {

// FastGelu forward uses the rounded constants of ORT's function body (section 2.3).
constexpr double kFastGeluA = 0.797885;  // ~ sqrt(2/pi)
constexpr double kFastGeluB = 0.035677;  // ~ 0.044715 * sqrt(2/pi)
// FastGeluGrad uses the exact constants (section 3.4).
constexpr double kSqrt2OverPi = 0.79788456080286535588;  // sqrt(2/pi)
constexpr double kGeluCubic = 0.044715;
constexpr double kSqrtHalf = 0.70710678118654752440;      // 1/sqrt(2)
constexpr double kInvSqrt2Pi = 0.39894228040143267794;    // 1/sqrt(2*pi)

template <typename C>
MEMOPT_HD C GeluValue(C x) {
  return x * C(0.5) * (C(1) + std::erf(x * C(kSqrtHalf)));
}
template <typename C>
MEMOPT_HD C FastGeluValue(C x) {
  return C(0.5) * x * (C(1) + std::tanh(C(kFastGeluA) * x + C(kFastGeluB) * x * x * x));
}
/// Overflow-free logistic function.
template <typename C>
MEMOPT_HD C Sigmoid(C v) {
  if (v >= C(0)) return C(1) / (C(1) + std::exp(-v));
  C e = std::exp(v);
  return e / (C(1) + e);
}
template <typename C>
MEMOPT_HD C GeluGradValue(C dy, C x) {
  C cdf = C(0.5) * (C(1) + std::erf(x * C(kSqrtHalf)));
  C pdf = std::exp(C(-0.5) * x * x) * C(kInvSqrt2Pi);
  return dy * (cdf + x * pdf);
}
template <typename C>
MEMOPT_HD C FastGeluGradValue(C dy, C x) {
  const C a = C(kSqrt2OverPi);
  const C b = C(3.0 * kGeluCubic * kSqrt2OverPi);
  C x3 = x * x * x;
  C t = std::tanh(a * (x + C(kGeluCubic) * x3));
  return dy * C(0.5) * (C(1) + t + (C(1) - t * t) * (a * x + b * x3));
}

}  // namespace memopt::math
