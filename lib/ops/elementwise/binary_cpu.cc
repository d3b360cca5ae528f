// Binary arithmetic with numpy broadcasting: Add Sub Mul Div Mod Pow PRelu. Integer arithmetic
// wraps (computed in the unsigned type of the same width); integer Div truncates toward zero and
// Div/Mod by zero give 0 instead of trapping.

// The build uses -O2, whose "very cheap" vectorizer cost model skips loops with a runtime trip
// count; the elementwise loops here are meant to be vectorized, so use the dynamic model.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("vect-cost-model=dynamic")
#endif
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>

#include "exec/kernels/elementwise.h"
#include "ir/op_registry.h"

namespace memopt::elementwise {

namespace {

/// Unsigned type wide enough that C's arithmetic does not promote to (signed) int.
template <typename C>
using WrapType = std::conditional_t<(sizeof(C) < 4), uint32_t, std::make_unsigned_t<C>>;

template <typename C>
C Add(C a, C b) {
  if constexpr (std::is_integral_v<C>) {
    return static_cast<C>(static_cast<WrapType<C>>(a) + static_cast<WrapType<C>>(b));
  } else {
    return a + b;
  }
}

template <typename C>
C Sub(C a, C b) {
  if constexpr (std::is_integral_v<C>) {
    return static_cast<C>(static_cast<WrapType<C>>(a) - static_cast<WrapType<C>>(b));
  } else {
    return a - b;
  }
}

template <typename C>
C Mul(C a, C b) {
  if constexpr (std::is_integral_v<C>) {
    return static_cast<C>(static_cast<WrapType<C>>(a) * static_cast<WrapType<C>>(b));
  } else {
    return a * b;
  }
}

template <typename C>
C Div(C a, C b) {
  if constexpr (std::is_integral_v<C>) {
    if (b == C(0)) return C(0);
    if constexpr (std::is_signed_v<C>) {
      if (b == C(-1)) return Sub(C(0), a);  // avoids the trap on INT_MIN / -1
    }
    return static_cast<C>(a / b);
  } else {
    return a / b;
  }
}

/// ONNX Mod: fmod = 1 -> C fmod (sign of the dividend); fmod = 0 -> sign of the divisor.
template <typename C>
C Mod(C a, C b, bool fmod) {
  if constexpr (std::is_integral_v<C>) {
    if (b == C(0)) return C(0);
    if constexpr (std::is_signed_v<C>) {
      if (b == C(-1)) return C(0);
      C r = static_cast<C>(a % b);
      if (!fmod && r != C(0) && ((r < C(0)) != (b < C(0)))) r = static_cast<C>(r + b);
      return r;
    } else {
      (void)fmod;
      return static_cast<C>(a % b);
    }
  } else {
    C r = std::fmod(a, b);
    if (!fmod && r != C(0) && ((r < C(0)) != (b < C(0)))) r += b;
    return r;
  }
}

/// Same-dtype binary op on every numeric type: out = StoreAs<T>(f(Load(a), Load(b))).
template <typename F>
Status BinarySameType(KernelContext& ctx, F f) {
  MEMOPT_ASSIGN_OR_RETURN(std::vector<int64_t> shape, BroadcastInputs(ctx, 2));
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  if (a.dtype() != b.dtype()) {
    return ctx.Error("inputs have different types " + DataTypeName(a.dtype()) + " and " + DataTypeName(b.dtype()));
  }
  ctx.outputs[0] = Tensor::Uninitialized(a.dtype(), shape);
  Tensor& y = ctx.outputs[0];
  return DispatchNumeric(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    Binary(a.data<T>(), a.shape(), b.data<T>(), b.shape(), y.data<T>(), shape,
                    [&f](T x, T z) { return StoreAs<T>(f(Load(x), Load(z))); });
  });
}

/// Integer power by squaring (wrapping); negative exponents truncate toward zero like 1 / a^|e|.
template <typename C>
C IntPow(C base, int64_t e) {
  if (e < 0) {
    if constexpr (std::is_signed_v<C>) {
      if (base == C(-1)) return (e % 2 == 0) ? C(1) : C(-1);
    }
    return base == C(1) ? C(1) : C(0);
  }
  C result = 1;
  C p = base;
  while (e > 0) {
    if (e & 1) result = Mul(result, p);
    p = Mul(p, p);
    e >>= 1;
  }
  return result;
}

/// Pow(X, Y): output has X's type; Y may have any numeric type.
Status PowKernel(KernelContext& ctx) {
  MEMOPT_ASSIGN_OR_RETURN(std::vector<int64_t> shape, BroadcastInputs(ctx, 2));
  const Tensor& x = ctx.input(0);
  const Tensor& e = ctx.input(1);
  ctx.outputs[0] = Tensor(x.dtype(), shape);
  Tensor& y = ctx.outputs[0];
  const bool exp_float = IsFloatingPoint(e.dtype());

  // Same float type (the common case): compute natively, with fast paths for a constant exponent.
  if (x.dtype() == e.dtype() && exp_float) {
    return DispatchFloat(x.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = ComputeType<T>;
      if (e.numel() == 1 && x.numel() == y.numel()) {
        const C p = Load(e.data<T>()[0]);
        const T* in = x.data<T>();
        T* out = y.data<T>();
        if (p == C(2)) return MapUnary(in, out, x.numel(), 1, [](C v) { return v * v; });
        if (p == C(1)) return MapUnary(in, out, x.numel(), 1, [](C v) { return v; });
        if (p == C(0.5)) return MapUnary(in, out, x.numel(), 4, [](C v) { return std::sqrt(v); });
        if (p == C(3)) return MapUnary(in, out, x.numel(), 1, [](C v) { return v * v * v; });
        return MapUnary(in, out, x.numel(), 8, [p](C v) { return std::pow(v, p); });
      }
      Binary(x.data<T>(), x.shape(), e.data<T>(), e.shape(), y.data<T>(), shape,
                      [](T a, T b) { return StoreAs<T>(std::pow(Load(a), Load(b))); });
    });
  }

  // Mixed types: the exponent as double (float exponents) or int64 (integer exponents).
  std::vector<double> exp_d;
  std::vector<int64_t> exp_i;
  if (exp_float) {
    exp_d.resize(static_cast<size_t>(e.numel()));
    for (int64_t i = 0; i < e.numel(); ++i) exp_d[i] = e.GetAsDouble(i);
  } else if (IsInteger(e.dtype())) {
    exp_i = e.ToInt64Vector();
  } else {
    return UnsupportedType(e.dtype(), "the exponent of Pow");
  }
  return DispatchNumeric(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    const T* a = x.data<T>();
    T* out = y.data<T>();
    if (exp_float) {
      Binary(a, x.shape(), exp_d.data(), e.shape(), out, shape, [](T v, double p) {
        return StoreAs<T>(std::pow(static_cast<double>(Load(v)), p));
      });
    } else if constexpr (std::is_integral_v<C>) {
      Binary(a, x.shape(), exp_i.data(), e.shape(), out, shape,
                      [](T v, int64_t p) { return StoreAs<T>(IntPow<C>(Load(v), p)); });
    } else {
      Binary(a, x.shape(), exp_i.data(), e.shape(), out, shape, [](T v, int64_t p) {
        return StoreAs<T>(std::pow(static_cast<double>(Load(v)), static_cast<double>(p)));
      });
    }
  });
}

}  // namespace

static void RegisterBinaryKernels(OpRegistry& r) {
  const auto nt = NumericTypes();
  r.SetCpuKernel("", "Add", [](KernelContext& ctx) {
    return BinarySameType(ctx, [](auto a, auto b) { return Add(a, b); });
  }, nt);
  r.SetCpuKernel("", "Sub", [](KernelContext& ctx) {
    return BinarySameType(ctx, [](auto a, auto b) { return Sub(a, b); });
  }, nt);
  r.SetCpuKernel("", "Mul", [](KernelContext& ctx) {
    return BinarySameType(ctx, [](auto a, auto b) { return Mul(a, b); });
  }, nt);
  r.SetCpuKernel("", "Div", [](KernelContext& ctx) {
    return BinarySameType(ctx, [](auto a, auto b) { return Div(a, b); });
  }, nt);
  r.SetCpuKernel("", "Mod", [](KernelContext& ctx) {
    const bool fmod = ctx.node->GetInt("fmod", 0) != 0;
    return BinarySameType(ctx, [fmod](auto a, auto b) { return Mod(a, b, fmod); });
  }, nt);
  r.SetCpuKernel("", "Pow", PowKernel, nt);
  // PRelu: y = x < 0 ? slope * x : x, slope broadcast to x.
  r.SetCpuKernel("", "PRelu", [](KernelContext& ctx) {
    return BinarySameType(ctx, [](auto x, auto slope) {
      using C = decltype(x);
      if constexpr (std::is_unsigned_v<C>) {
        (void)slope;
        return x;
      } else {
        return x < C(0) ? Mul(slope, x) : x;
      }
    });
  }, nt);
}

}  // namespace memopt::elementwise

MEMOPT_OPS(elementwise, binary_cpu) {
  memopt::elementwise::RegisterBinaryKernels(ops);
}
