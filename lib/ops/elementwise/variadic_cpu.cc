// Variadic elementwise ops with broadcasting over all inputs: Sum, Mean, Max, Min; and Where.
// Sum/Max/Min fold the inputs one at a time into the output buffer (in place), so float16 and
// bfloat16 partial results are rounded after each input, as a chain of binary ops would be.

// The build uses -O2, whose "very cheap" vectorizer cost model skips loops with a runtime trip
// count; the elementwise loops here are meant to be vectorized, so use the dynamic model.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("vect-cost-model=dynamic")
#endif
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>

#include "exec/kernels/elementwise.h"
#include "ir/op_registry.h"

namespace memopt::elementwise {

namespace {

template <typename C>
C MaxOf(C a, C b) {
  if constexpr (std::is_floating_point_v<C>) {
    if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<C>::quiet_NaN();
  }
  return a < b ? b : a;
}

template <typename C>
C MinOf(C a, C b) {
  if constexpr (std::is_floating_point_v<C>) {
    if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<C>::quiet_NaN();
  }
  return b < a ? b : a;
}

/// Copies `in` broadcast to `shape` into out (same element type).
template <typename T>
void BroadcastCopy(const T* in, const std::vector<int64_t>& in_shape, T* out, const std::vector<int64_t>& shape) {
  const int64_t n = NumElements(shape);
  if (NumElements(in_shape) == n) {
    std::memcpy(static_cast<void*>(out), static_cast<const void*>(in), static_cast<size_t>(n) * sizeof(T));
    return;
  }
  ForEachIndexed(shape, {BroadcastStrides(in_shape, shape)},
                 [&](int64_t i, const int64_t* off) { out[i] = in[off[0]]; });
}

/// out = f(...f(f(in0, in1), in2)..., in_{n-1}) with broadcasting; all inputs share one dtype, which
/// `dispatch` (DispatchFloat or DispatchNumeric) selects. `mean` divides by n at the end.
template <typename Dispatch, typename F>
Status Fold(KernelContext& ctx, Dispatch dispatch, F f, bool mean) {
  const int n = ctx.num_inputs();
  if (n < 1) return ctx.Error("needs at least one input");
  MEMOPT_ASSIGN_OR_RETURN(std::vector<int64_t> shape, BroadcastInputs(ctx, n));
  const DataType dt = ctx.input(0).dtype();
  for (int i = 1; i < n; ++i) {
    if (ctx.input(i).dtype() != dt) {
      return ctx.Error("input " + std::to_string(i) + " has type " + DataTypeName(ctx.input(i).dtype()) +
                       ", input 0 has " + DataTypeName(dt));
    }
  }
  ctx.outputs[0] = Tensor::Uninitialized(dt, shape);  // the first pass writes every element
  Tensor& y = ctx.outputs[0];
  return dispatch(dt, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    T* out = y.data<T>();
    const auto apply = [&f](T a, T b) { return StoreAs<T>(f(Load(a), Load(b))); };
    // Input 0 combined with input 1 in one broadcast pass, then the rest folded in place.
    if (n == 1) {
      BroadcastCopy(ctx.input(0).data<T>(), ctx.input(0).shape(), out, shape);
    } else {
      Binary(ctx.input(0).data<T>(), ctx.input(0).shape(), ctx.input(1).data<T>(), ctx.input(1).shape(), out,
                      shape, apply);
    }
    for (int i = 2; i < n; ++i) {
      Binary(static_cast<const T*>(out), shape, ctx.input(i).data<T>(), ctx.input(i).shape(), out, shape,
                      apply);
    }
    if (mean && n > 1) {
      const C count = static_cast<C>(n);
      MapUnary(static_cast<const T*>(out), out, y.numel(), 1, [count](C v) { return v / count; });
    }
  });
}

Status WhereKernel(KernelContext& ctx) {
  MEMOPT_ASSIGN_OR_RETURN(std::vector<int64_t> shape, BroadcastInputs(ctx, 3));
  const Tensor& c = ctx.input(0);
  const Tensor& x = ctx.input(1);
  const Tensor& z = ctx.input(2);
  if (c.dtype() != DataType::kBool) return ctx.Error("condition must be bool, got " + DataTypeName(c.dtype()));
  if (x.dtype() != z.dtype()) {
    return ctx.Error("X and Y have different types " + DataTypeName(x.dtype()) + " and " + DataTypeName(z.dtype()));
  }
  ctx.outputs[0] = Tensor::Uninitialized(x.dtype(), shape);  // every element is selected
  Tensor& y = ctx.outputs[0];
  const bool* cond = c.data<bool>();
  if (x.dtype() == DataType::kString) {
    const std::vector<std::vector<int64_t>> strides = {BroadcastStrides(c.shape(), shape),
                                                       BroadcastStrides(x.shape(), shape),
                                                       BroadcastStrides(z.shape(), shape)};
    auto& out = y.strings();
    ForEachIndexed(shape, strides, [&](int64_t i, const int64_t* off) {
      out[i] = cond[off[0]] ? x.strings()[off[1]] : z.strings()[off[2]];
    });
    return Status::Ok();
  }
  return DispatchBySize(x.dtype(), [&](auto tag) {
    using U = typename decltype(tag)::type;
    const U* a = x.data<U>();
    const U* b = z.data<U>();
    U* out = y.data<U>();
    const int64_t n = y.numel();
    if (c.numel() == n && x.numel() == n && z.numel() == n) {
      ParallelFor(n, 1, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) out[i] = cond[i] ? a[i] : b[i];
      });
      return;
    }
    if (c.numel() == n && x.numel() == 1 && z.numel() == n) {  // masked fill
      const U av = a[0];
      ParallelFor(n, 1, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) out[i] = cond[i] ? av : b[i];
      });
      return;
    }
    if (c.numel() == n && x.numel() == n && z.numel() == 1) {
      const U bv = b[0];
      ParallelFor(n, 1, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) out[i] = cond[i] ? a[i] : bv;
      });
      return;
    }
    ForEachBroadcastRow<3>({&c.shape(), &x.shape(), &z.shape()}, shape,
                           [&](int64_t o, const std::array<int64_t, 3>& off, int64_t cnt,
                               const std::array<int64_t, 3>& step) {
                             const bool* pc = cond + off[0];
                             const U* pa = a + off[1];
                             const U* pb = b + off[2];
                             U* po = out + o;
                             // A mask row over a scores row with a scalar fill (attention's causal
                             // mask) selects bits through a mask, a loop that vectorises (as a
                             // select, GCC branched on every element); other steps element by
                             // element.
                             const auto pick = [](bool c, U x, U y) {
                               const U m = static_cast<U>(U(0) - static_cast<U>(c));
                               return static_cast<U>((x & m) | (y & static_cast<U>(~m)));
                             };
                             if (step[0] == 1 && step[1] == 0 && step[2] == 1) {
                               const U av = *pa;
                               for (int64_t i = 0; i < cnt; ++i) po[i] = pick(pc[i], av, pb[i]);
                             } else if (step[0] == 1 && step[1] == 1 && step[2] == 0) {
                               const U bv = *pb;
                               for (int64_t i = 0; i < cnt; ++i) po[i] = pick(pc[i], pa[i], bv);
                             } else {
                               for (int64_t i = 0; i < cnt; ++i) {
                                 po[i] = pc[i * step[0]] ? pa[i * step[1]] : pb[i * step[2]];
                               }
                             }
                           });
  });
}

}  // namespace

static void RegisterVariadicKernels(OpRegistry& r) {
  r.SetCpuKernel("", "Sum", [](KernelContext& ctx) {
    return Fold(ctx, [](DataType t, auto&& f) { return DispatchNumeric(t, f); }, [](auto a, auto b) {
      using C = decltype(a);
      if constexpr (std::is_integral_v<C>) {
        return static_cast<C>(static_cast<std::make_unsigned_t<C>>(a) + static_cast<std::make_unsigned_t<C>>(b));
      } else {
        return a + b;
      }
    }, false);
  }, NumericTypes());
  r.SetCpuKernel("", "Mean", [](KernelContext& ctx) {
    return Fold(ctx, [](DataType t, auto&& f) { return DispatchFloat(t, f); }, [](auto a, auto b) { return a + b; },
                true);
  }, FloatTypes());
  r.SetCpuKernel("", "Max", [](KernelContext& ctx) {
    return Fold(ctx, [](DataType t, auto&& f) { return DispatchNumeric(t, f); },
                [](auto a, auto b) { return MaxOf(a, b); }, false);
  }, NumericTypes());
  r.SetCpuKernel("", "Min", [](KernelContext& ctx) {
    return Fold(ctx, [](DataType t, auto&& f) { return DispatchNumeric(t, f); },
                [](auto a, auto b) { return MinOf(a, b); }, false);
  }, NumericTypes());
  r.SetCpuKernel("", "Where", WhereKernel, AllTypes());
}

}  // namespace memopt::elementwise

MEMOPT_OPS(elementwise, variadic_cpu) {
  memopt::elementwise::RegisterVariadicKernels(ops);
}
