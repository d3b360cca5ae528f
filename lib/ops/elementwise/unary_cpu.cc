// Unary math and activation kernels: one output of the input's dtype and shape. Float types are
// computed in float (double for double); float16/bfloat16 are rounded on store.

// The build uses -O2, whose "very cheap" vectorizer cost model skips loops with a runtime trip
// count; the elementwise loops here are meant to be vectorized, so use the dynamic model.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("vect-cost-model=dynamic")
#endif
#include <cmath>
#include <string>
#include <type_traits>

#include "exec/kernels/elementwise.h"
#include "exec/math/vector_math.h"
#include "ir/op_registry.h"

namespace memopt::elementwise {

namespace {

template <typename C>
C Sigmoid(C x) {
  // Stable for large |x|: never computes exp of a large positive number.
  if (x >= C(0)) return C(1) / (C(1) + std::exp(-x));
  const C e = std::exp(x);
  return e / (C(1) + e);
}

template <typename C>
C Softplus(C x) {
  // log(1 + exp(x)) without overflow.
  return x > C(0) ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
}

void RegisterMath(OpRegistry& r) {
  const auto ft = FloatTypes();
  r.SetCpuKernel("", "Exp", [](KernelContext& ctx) { return UnaryFloatArray(ctx, 8, math::ExpArray, [](auto x) { return math::Exp(x); }); }, ft);
  r.SetCpuKernel("", "Log", [](KernelContext& ctx) { return UnaryFloat(ctx, 8, [](auto x) { return std::log(x); }); }, ft);
  r.SetCpuKernel("", "Sqrt", [](KernelContext& ctx) { return UnaryFloat(ctx, 4, [](auto x) { return std::sqrt(x); }); },
             ft);
  r.SetCpuKernel("", "Reciprocal", [](KernelContext& ctx) {
    return UnaryFloat(ctx, 2, [](auto x) { return decltype(x)(1) / x; });
  }, ft);
  r.SetCpuKernel("", "Sin", [](KernelContext& ctx) { return UnaryFloat(ctx, 8, [](auto x) { return std::sin(x); }); }, ft);
  r.SetCpuKernel("", "Cos", [](KernelContext& ctx) { return UnaryFloat(ctx, 8, [](auto x) { return std::cos(x); }); }, ft);
  r.SetCpuKernel("", "Tan", [](KernelContext& ctx) { return UnaryFloat(ctx, 8, [](auto x) { return std::tan(x); }); }, ft);
  r.SetCpuKernel("", "Asin", [](KernelContext& ctx) { return UnaryFloat(ctx, 8, [](auto x) { return std::asin(x); }); },
             ft);
  r.SetCpuKernel("", "Acos", [](KernelContext& ctx) { return UnaryFloat(ctx, 8, [](auto x) { return std::acos(x); }); },
             ft);
  r.SetCpuKernel("", "Atan", [](KernelContext& ctx) { return UnaryFloat(ctx, 8, [](auto x) { return std::atan(x); }); },
             ft);
  r.SetCpuKernel("", "Sinh", [](KernelContext& ctx) { return UnaryFloat(ctx, 8, [](auto x) { return std::sinh(x); }); },
             ft);
  r.SetCpuKernel("", "Cosh", [](KernelContext& ctx) { return UnaryFloat(ctx, 8, [](auto x) { return std::cosh(x); }); },
             ft);
  r.SetCpuKernel("", "Asinh", [](KernelContext& ctx) { return UnaryFloat(ctx, 8, [](auto x) { return std::asinh(x); }); },
             ft);
  r.SetCpuKernel("", "Acosh", [](KernelContext& ctx) { return UnaryFloat(ctx, 8, [](auto x) { return std::acosh(x); }); },
             ft);
  r.SetCpuKernel("", "Atanh", [](KernelContext& ctx) { return UnaryFloat(ctx, 8, [](auto x) { return std::atanh(x); }); },
             ft);
  r.SetCpuKernel("", "Erf", [](KernelContext& ctx) { return UnaryFloatArray(ctx, 8, math::ErfArray, [](auto x) { return math::Erf(x); }); }, ft);
  r.SetCpuKernel("", "Tanh", [](KernelContext& ctx) { return UnaryFloatArray(ctx, 8, math::TanhArray, [](auto x) { return math::Tanh(x); }); },
             ft);
  r.SetCpuKernel("", "Floor", [](KernelContext& ctx) { return UnaryFloat(ctx, 1, [](auto x) { return std::floor(x); }); },
             ft);
  r.SetCpuKernel("", "Ceil", [](KernelContext& ctx) { return UnaryFloat(ctx, 1, [](auto x) { return std::ceil(x); }); },
             ft);
  // Round half to even (the default rounding mode), as ONNX specifies.
  r.SetCpuKernel("", "Round", [](KernelContext& ctx) {
    return UnaryFloat(ctx, 1, [](auto x) { return std::nearbyint(x); });
  }, ft);
}

void RegisterSignedMath(OpRegistry& r) {
  const auto nt = NumericTypes();
  r.SetCpuKernel("", "Abs", [](KernelContext& ctx) {
    return UnaryNumeric(ctx, 1, [](auto x) {
      using C = decltype(x);
      if constexpr (std::is_floating_point_v<C>) {
        return std::fabs(x);
      } else if constexpr (std::is_signed_v<C>) {
        return x < C(0) ? C(-x) : x;
      } else {
        return x;
      }
    });
  }, nt);
  r.SetCpuKernel("", "Neg", [](KernelContext& ctx) {
    return UnaryNumeric(ctx, 1, [](auto x) {
      using C = decltype(x);
      if constexpr (std::is_unsigned_v<C>) {
        return C(C(0) - x);
      } else {
        return C(-x);
      }
    });
  }, nt);
  r.SetCpuKernel("", "Sign", [](KernelContext& ctx) {
    return UnaryNumeric(ctx, 1, [](auto x) {
      using C = decltype(x);
      if constexpr (std::is_unsigned_v<C>) {
        return C(x > C(0) ? 1 : 0);
      } else if constexpr (std::is_floating_point_v<C>) {
        return std::isnan(x) ? x : C(x > C(0) ? 1 : (x < C(0) ? -1 : 0));
      } else {
        return C(x > C(0) ? 1 : (x < C(0) ? -1 : 0));
      }
    });
  }, nt);
  r.SetCpuKernel("", "Relu", [](KernelContext& ctx) {
    return UnaryNumeric(ctx, 1, [](auto x) {
      using C = decltype(x);
      if constexpr (std::is_unsigned_v<C>) {
        return x;
      } else {
        return x > C(0) ? x : C(0);
      }
    });
  }, nt);
  // Shrink: numeric types, computed in double so that integer inputs follow the same formula.
  r.SetCpuKernel("", "Shrink", [](KernelContext& ctx) {
    const double bias = ctx.node->GetFloat("bias", 0.0f);
    const double lambd = ctx.node->GetFloat("lambd", 0.5f);
    return UnaryNumeric(ctx, 2, [bias, lambd](auto x) {
      const double v = static_cast<double>(x);
      return v < -lambd ? v + bias : (v > lambd ? v - bias : 0.0);
    });
  }, nt);
}

void RegisterActivations(OpRegistry& r) {
  const auto ft = FloatTypes();
  r.SetCpuKernel("", "Sigmoid", [](KernelContext& ctx) {
    return UnaryFloat(ctx, 8, [](auto x) { return Sigmoid(x); });
  }, ft);
  // Swish (opset 24): x * sigmoid(alpha * x).
  r.SetCpuKernel("", "Swish", [](KernelContext& ctx) {
    const float alpha = ctx.node->GetFloat("alpha", 1.0f);
    return UnaryFloat(ctx, 8, [alpha](auto x) {
      using C = decltype(x);
      return x * Sigmoid(C(alpha) * x);
    });
  }, ft);
  r.SetCpuKernel("", "HardSigmoid", [](KernelContext& ctx) {
    const float alpha = ctx.node->GetFloat("alpha", 0.2f);
    const float beta = ctx.node->GetFloat("beta", 0.5f);
    return UnaryFloat(ctx, 2, [alpha, beta](auto x) {
      using C = decltype(x);
      return std::max(C(0), std::min(C(1), C(alpha) * x + C(beta)));
    });
  }, ft);
  r.SetCpuKernel("", "HardSwish", [](KernelContext& ctx) {
    return UnaryFloat(ctx, 2, [](auto x) {
      using C = decltype(x);
      return x * std::max(C(0), std::min(C(1), x / C(6) + C(0.5)));
    });
  }, ft);
  r.SetCpuKernel("", "LeakyRelu", [](KernelContext& ctx) {
    const float alpha = ctx.node->GetFloat("alpha", 0.01f);
    return UnaryFloat(ctx, 1, [alpha](auto x) {
      using C = decltype(x);
      return x < C(0) ? C(alpha) * x : x;
    });
  }, ft);
  r.SetCpuKernel("", "Elu", [](KernelContext& ctx) {
    const float alpha = ctx.node->GetFloat("alpha", 1.0f);
    return UnaryFloat(ctx, 8, [alpha](auto x) {
      using C = decltype(x);
      return x < C(0) ? C(alpha) * std::expm1(x) : x;
    });
  }, ft);
  r.SetCpuKernel("", "Selu", [](KernelContext& ctx) {
    const float alpha = ctx.node->GetFloat("alpha", 1.67326319217681884765625f);
    const float gamma = ctx.node->GetFloat("gamma", 1.05070102214813232421875f);
    return UnaryFloat(ctx, 8, [alpha, gamma](auto x) {
      using C = decltype(x);
      return x > C(0) ? C(gamma) * x : C(gamma) * C(alpha) * std::expm1(x);
    });
  }, ft);
  r.SetCpuKernel("", "Celu", [](KernelContext& ctx) {
    const float alpha = ctx.node->GetFloat("alpha", 1.0f);
    return UnaryFloat(ctx, 8, [alpha](auto x) {
      using C = decltype(x);
      return std::max(C(0), x) + std::min(C(0), C(alpha) * std::expm1(x / C(alpha)));
    });
  }, ft);
  r.SetCpuKernel("", "ThresholdedRelu", [](KernelContext& ctx) {
    const float alpha = ctx.node->GetFloat("alpha", 1.0f);
    return UnaryFloat(ctx, 1, [alpha](auto x) {
      using C = decltype(x);
      return x > C(alpha) ? x : C(0);
    });
  }, ft);
  r.SetCpuKernel("", "Softplus", [](KernelContext& ctx) {
    return UnaryFloat(ctx, 8, [](auto x) { return Softplus(x); });
  }, ft);
  r.SetCpuKernel("", "Softsign", [](KernelContext& ctx) {
    return UnaryFloat(ctx, 2, [](auto x) {
      using C = decltype(x);
      return x / (C(1) + std::fabs(x));
    });
  }, ft);
  r.SetCpuKernel("", "Mish", [](KernelContext& ctx) {
    return UnaryFloat(ctx, 16, [](auto x) { return x * std::tanh(Softplus(x)); });
  }, ft);
  // ONNX Gelu (opset 20): approximate = "none" (erf form) or "tanh".
  r.SetCpuKernel("", "Gelu", [](KernelContext& ctx) {
    const std::string approximate = ctx.node->GetString("approximate", "none");
    if (approximate == "tanh") {
      return UnaryFloat(ctx, 10, [](auto x) {
        using C = decltype(x);
        const C k = C(0.7978845608028654);  // sqrt(2 / pi)
        return C(0.5) * x * (C(1) + math::Tanh(k * (x + C(0.044715) * x * x * x)));
      });
    }
    if (approximate != "none") return ctx.Error("unknown approximate '" + approximate + "' (expected none or tanh)");
    return UnaryFloatArray(
        ctx, 10, [](const float* x, float* y, int64_t n) { math::GeluArray(x, nullptr, y, n); },
        [](auto x) { return x * math::NormCdf(x); });
  }, ft);
}

/// IsNaN / IsInf: float types in, bool out.
template <typename Pred>
Status FloatPredicate(KernelContext& ctx, Pred pred) {
  MEMOPT_RETURN_IF_ERROR(RequireInputs(ctx, 1));
  const Tensor& x = ctx.input(0);
  ctx.outputs[0] = Tensor(DataType::kBool, x.shape());
  bool* out = ctx.outputs[0].data<bool>();
  return DispatchFloat(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* in = x.data<T>();
    ParallelFor(x.numel(), 1, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) out[i] = pred(Load(in[i]));
    });
  });
}

void RegisterPredicates(OpRegistry& r) {
  r.SetCpuKernel("", "IsNaN", [](KernelContext& ctx) {
    return FloatPredicate(ctx, [](auto x) { return std::isnan(x); });
  }, FloatTypes());
  r.SetCpuKernel("", "IsInf", [](KernelContext& ctx) {
    const bool neg = ctx.node->GetInt("detect_negative", 1) != 0;
    const bool pos = ctx.node->GetInt("detect_positive", 1) != 0;
    return FloatPredicate(ctx, [neg, pos](auto x) {
      using C = decltype(x);
      return std::isinf(x) && ((x > C(0) && pos) || (x < C(0) && neg));
    });
  }, FloatTypes());
}

}  // namespace

static void RegisterUnaryKernels(OpRegistry& r) {
  RegisterMath(r);
  RegisterSignedMath(r);
  RegisterActivations(r);
  RegisterPredicates(r);
}

}  // namespace memopt::elementwise

MEMOPT_OPS(elementwise, unary_cpu) {
  memopt::elementwise::RegisterUnaryKernels(ops);
}
