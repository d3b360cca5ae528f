// Gelu-family forward ops (com.microsoft Gelu, BiasGelu, FastGelu, QuickGelu) and the elementwise
// activation gradients (GeluGrad, FastGeluGrad, BiasGeluGrad_dX, BiasFastGeluGrad_dX,
// QuickGeluGrad, ReluGrad, SigmoidGrad, TanhGrad, LeakyReluGrad).
// Formulas: docs ort_training_ops.md sections 2.1-2.4 and 3.1-3.6. float16/bfloat16 are computed
// in float and rounded on store; float64 in double. Exact Gelu and its gradient in float go through
// the vectorised math of exec/math/vector_math.h.
#include <cmath>
#include <optional>

#include "exec/kernels/kernel_util.h"
#include "exec/kernels/training_util.h"
#include "exec/math/activation_math.h"
#include "exec/math/vector_math.h"
#include "ir/op_registry.h"

namespace memopt::training {
namespace {

using math::FastGeluGradValue;
using math::FastGeluValue;
using math::GeluGradValue;
using math::GeluValue;
using math::Sigmoid;

/// Bias input `bias_index` (optional when `optional`): checks it is float and that its length
/// divides the main input (1-D bias along the last axis, or a same-shape bias).
Status CheckBias(const KernelContext& ctx, int main_index, int bias_index) {
  MEMOPT_RETURN_IF_ERROR(RequireFloatInput(ctx, bias_index, "bias"));
  const Tensor& x = ctx.input(main_index);
  const Tensor& b = ctx.input(bias_index);
  bool ok = b.numel() > 0 && x.numel() % b.numel() == 0;
  if (ok && b.rank() == 1 && x.rank() > 0) ok = b.dim(0) == x.dim(x.rank() - 1);
  if (!ok) {
    return ctx.Error("bias " + b.Describe() + " must be 1-D with the length of the last dim of " + x.Describe());
  }
  return Status::Ok();
}

/// y[i] = f(x[i] (+ bias[i % len])) for the forward activations.
template <typename F>
Status UnaryForward(KernelContext& ctx, int bias_index, F f) {
  MEMOPT_RETURN_IF_ERROR(RequireFloatInput(ctx, 0, "X"));
  const bool has_bias = bias_index >= 0 && ctx.has_input(bias_index);
  if (has_bias) MEMOPT_RETURN_IF_ERROR(CheckBias(ctx, 0, bias_index));
  const Tensor& x = ctx.input(0);
  ctx.outputs[0] = Tensor::Uninitialized(x.dtype(), x.shape());
  return DispatchCompute(ctx, x.dtype(), [&]<typename C>() -> Status {
    FloatIn<C> in(x);
    FloatOut<C> out(ctx.outputs[0]);
    const int64_t n = x.numel();
    if (has_bias) {
      FloatIn<C> b(ctx.input(bias_index));
      const int64_t nb = ctx.input(bias_index).numel();
      ParallelFor(n, 20, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) out[i] = f(in[i] + b[i % nb]);
      });
    } else {
      ParallelFor(n, 20, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) out[i] = f(in[i]);
      });
    }
    return Status::Ok();
  });
}

/// dx[i] = f(dy[i], x[i] (+ bias[i % len])) for the gradient ops with inputs (dY, X[, B]).
template <typename F>
Status BinaryGrad(KernelContext& ctx, const char* second_name, int bias_index, F f) {
  MEMOPT_RETURN_IF_ERROR(RequireFloatInput(ctx, 0, "dY"));
  MEMOPT_RETURN_IF_ERROR(RequireFloatInput(ctx, 1, second_name));
  MEMOPT_RETURN_IF_ERROR(RequireSameSize(ctx, 0, 1));
  if (bias_index >= 0) MEMOPT_RETURN_IF_ERROR(CheckBias(ctx, 1, bias_index));
  const Tensor& dy = ctx.input(0);
  ctx.outputs[0] = Tensor::Uninitialized(dy.dtype(), ctx.input(1).shape());
  return DispatchCompute(ctx, dy.dtype(), [&]<typename C>() -> Status {
    FloatIn<C> g(dy);
    FloatIn<C> x(ctx.input(1));
    FloatOut<C> out(ctx.outputs[0]);
    const int64_t n = dy.numel();
    if (bias_index >= 0) {
      FloatIn<C> b(ctx.input(bias_index));
      const int64_t nb = ctx.input(bias_index).numel();
      ParallelFor(n, 20, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) out[i] = f(g[i], x[i] + b[i % nb]);
      });
    } else {
      ParallelFor(n, 20, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) out[i] = f(g[i], x[i]);
      });
    }
    return Status::Ok();
  });
}

/// The `n` elements split over the threads as fn(first_element, count): rows of `row` elements,
/// each starting a bias row, when there is a bias (row > 0, dividing n: CheckBias); chunks of a
/// few pages otherwise.
template <typename Fn>
void ForBiasRows(int64_t n, int64_t row, Fn&& fn) {
  constexpr int64_t kChunk = 4096;
  if (row <= 0) {
    ParallelFor((n + kChunk - 1) / kChunk, kChunk * 20, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) fn(r * kChunk, std::min(kChunk, n - r * kChunk));
    });
    return;
  }
  ParallelFor(n / row, row * 20, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) fn(r * row, row);
  });
}

/// Exact Gelu: float through the vectorised math (exec/math/vector_math.h), double via libm.
Status GeluForward(KernelContext& ctx, int bias_index) {
  MEMOPT_RETURN_IF_ERROR(RequireFloatInput(ctx, 0, "X"));
  const bool has_bias = bias_index >= 0 && ctx.has_input(bias_index);
  if (has_bias) MEMOPT_RETURN_IF_ERROR(CheckBias(ctx, 0, bias_index));
  if (ctx.input(0).dtype() == DataType::kDouble) {
    return UnaryForward(ctx, bias_index, [](auto x) { return GeluValue(x); });
  }
  const Tensor& x = ctx.input(0);
  ctx.outputs[0] = Tensor::Uninitialized(x.dtype(), x.shape());
  FloatIn<float> in(x);
  FloatOut<float> out(ctx.outputs[0]);
  std::optional<FloatIn<float>> b;
  if (has_bias) b.emplace(ctx.input(bias_index));
  const int64_t row = has_bias ? ctx.input(bias_index).numel() : 0;
  ForBiasRows(x.numel(), row, [&](int64_t at, int64_t count) {
    math::GeluArray(in.data() + at, has_bias ? b->data() : nullptr, out.data() + at, count);
  });
  return Status::Ok();
}

/// dX of exact Gelu (inputs dY, X[, B]), float vectorised as GeluForward.
Status GeluBackward(KernelContext& ctx, int bias_index) {
  if (ctx.has_input(0) && ctx.input(0).dtype() == DataType::kDouble) {
    return BinaryGrad(ctx, "X", bias_index, [](auto dy, auto x) { return GeluGradValue(dy, x); });
  }
  MEMOPT_RETURN_IF_ERROR(RequireFloatInput(ctx, 0, "dY"));
  MEMOPT_RETURN_IF_ERROR(RequireFloatInput(ctx, 1, "X"));
  MEMOPT_RETURN_IF_ERROR(RequireSameSize(ctx, 0, 1));
  if (bias_index >= 0) MEMOPT_RETURN_IF_ERROR(CheckBias(ctx, 1, bias_index));
  const Tensor& dy = ctx.input(0);
  ctx.outputs[0] = Tensor::Uninitialized(dy.dtype(), ctx.input(1).shape());
  FloatIn<float> g(dy);
  FloatIn<float> x(ctx.input(1));
  FloatOut<float> out(ctx.outputs[0]);
  std::optional<FloatIn<float>> b;
  if (bias_index >= 0) b.emplace(ctx.input(bias_index));
  const int64_t row = bias_index >= 0 ? ctx.input(bias_index).numel() : 0;
  ForBiasRows(dy.numel(), row, [&](int64_t at, int64_t count) {
    math::GeluGradArray(g.data() + at, x.data() + at, bias_index >= 0 ? b->data() : nullptr, out.data() + at, count);
  });
  return Status::Ok();
}

Status GeluKernel(KernelContext& ctx) { return GeluForward(ctx, -1); }
Status BiasGeluKernel(KernelContext& ctx) {
  MEMOPT_RETURN_IF_ERROR(RequireInput(ctx, 1, "B"));
  return GeluForward(ctx, 1);
}
Status FastGeluKernel(KernelContext& ctx) {
  return UnaryForward(ctx, 1, [](auto x) { return FastGeluValue(x); });
}
Status QuickGeluKernel(KernelContext& ctx) {
  const double alpha = ctx.node->GetFloat("alpha", 1.702f);
  return UnaryForward(ctx, -1, [alpha](auto x) {
    using C = decltype(x);
    return x * Sigmoid(C(alpha) * x);
  });
}

Status GeluGradKernel(KernelContext& ctx) { return GeluBackward(ctx, -1); }
Status FastGeluGradKernel(KernelContext& ctx) {
  return BinaryGrad(ctx, "X", -1, [](auto dy, auto x) { return FastGeluGradValue(dy, x); });
}
Status BiasGeluGradKernel(KernelContext& ctx) { return GeluBackward(ctx, 2); }
Status BiasFastGeluGradKernel(KernelContext& ctx) {
  return BinaryGrad(ctx, "X", 2, [](auto dy, auto x) { return FastGeluGradValue(dy, x); });
}
Status QuickGeluGradKernel(KernelContext& ctx) {
  const double alpha = ctx.node->GetFloat("alpha", 1.702f);
  return BinaryGrad(ctx, "X", -1, [alpha](auto dy, auto x) {
    using C = decltype(x);
    C ax = C(alpha) * x;
    C s = Sigmoid(ax);
    return dy * s * (C(1) + ax * (C(1) - s));
  });
}
Status ReluGradKernel(KernelContext& ctx) {
  return BinaryGrad(ctx, "X", -1, [](auto dy, auto x) {
    using C = decltype(x);
    return x > C(0) ? dy : C(0);
  });
}
Status SigmoidGradKernel(KernelContext& ctx) {
  return BinaryGrad(ctx, "Y", -1, [](auto dy, auto y) {
    using C = decltype(y);
    return dy * y * (C(1) - y);
  });
}
Status TanhGradKernel(KernelContext& ctx) {
  return BinaryGrad(ctx, "Y", -1, [](auto dy, auto y) {
    using C = decltype(y);
    return dy * (C(1) - y * y);
  });
}
Status LeakyReluGradKernel(KernelContext& ctx) {
  const double alpha = ctx.node->GetFloat("alpha", 0.01f);
  return BinaryGrad(ctx, "Y", -1, [alpha](auto dy, auto y) {
    using C = decltype(y);
    return y > C(0) ? dy : dy * C(alpha);
  });
}

}  // namespace

static void RegisterActivationKernels(OpRegistry& r) {
  const auto types = FloatTypes();
  r.SetCpuKernel(kMsDomain, "Gelu", GeluKernel, types);
  r.SetCpuKernel(kMsDomain, "BiasGelu", BiasGeluKernel, types);
  r.SetCpuKernel(kMsDomain, "FastGelu", FastGeluKernel, types);
  r.SetCpuKernel(kMsDomain, "QuickGelu", QuickGeluKernel, types);
  r.SetCpuKernel(kMsDomain, "GeluGrad", GeluGradKernel, types);
  r.SetCpuKernel(kMsDomain, "FastGeluGrad", FastGeluGradKernel, types);
  r.SetCpuKernel(kMsDomain, "BiasGeluGrad_dX", BiasGeluGradKernel, types);
  r.SetCpuKernel(kMsDomain, "BiasFastGeluGrad_dX", BiasFastGeluGradKernel, types);
  r.SetCpuKernel(kMsDomain, "QuickGeluGrad", QuickGeluGradKernel, types);
  r.SetCpuKernel(kMsDomain, "ReluGrad", ReluGradKernel, types);
  r.SetCpuKernel(kMsDomain, "SigmoidGrad", SigmoidGradKernel, types);
  r.SetCpuKernel(kMsDomain, "TanhGrad", TanhGradKernel, types);
  r.SetCpuKernel(kMsDomain, "LeakyReluGrad", LeakyReluGradKernel, types);
}

}  // namespace memopt::training

MEMOPT_OPS(activation, activation_grad_cpu) {
  memopt::training::RegisterActivationKernels(ops);
}
