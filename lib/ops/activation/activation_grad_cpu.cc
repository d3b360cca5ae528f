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

/// A bias of nb values added to element i as bias[i % nb]: read chunk by chunk when it has the
/// input's size, else converted once (a row: CheckBias).
template <typename C>
class BiasReader {
 public:
  BiasReader(const Tensor* t, int64_t n) : t_(t), nb_(t != nullptr ? t->numel() : 0), n_(n) {
    if (t_ != nullptr && nb_ != n_) {
      whole_.resize(static_cast<size_t>(nb_));
      ConvertRange(*t_, 0, nb_, whole_.data());
    }
  }
  bool present() const { return t_ != nullptr; }
  /// p with p[i] the bias of element first + i, i < count; `row_aligned` chunks (first a multiple of
  /// nb, count <= nb) or a same-size bias; `buf` room for count.
  const C* Chunk(int64_t first, int64_t count, C* buf) const {
    if (nb_ == n_) return ReadRange(*t_, first, count, buf);
    return whole_.data() + first % nb_;
  }
  C At(int64_t i, const C* chunk, int64_t first) const { return nb_ == n_ ? chunk[i - first] : whole_[i % nb_]; }

 private:
  const Tensor* t_;
  int64_t nb_, n_;
  std::vector<C> whole_;
};

/// y[i] = f(x[i] (+ bias[i % len])) for the forward activations, a chunk at a time.
template <typename F>
Status UnaryForward(KernelContext& ctx, int bias_index, F f) {
  MEMOPT_RETURN_IF_ERROR(RequireFloatInput(ctx, 0, "X"));
  const bool has_bias = bias_index >= 0 && ctx.has_input(bias_index);
  if (has_bias) MEMOPT_RETURN_IF_ERROR(CheckBias(ctx, 0, bias_index));
  const Tensor& x = ctx.input(0);
  ctx.outputs[0] = Tensor::Uninitialized(x.dtype(), x.shape());
  Tensor& y = ctx.outputs[0];
  return DispatchCompute(ctx, x.dtype(), [&]<typename C>() -> Status {
    const BiasReader<C> bias(has_bias ? &ctx.input(bias_index) : nullptr, x.numel());
    ForEachChunk<C>(x.numel(), 20, [&](int64_t first, int64_t count, ChunkBuffers<C>& buf) {
      const C* in = ReadRange(x, first, count, buf, 0);
      C* out = WriteRange(y, first, count, buf, 1);
      if (bias.present()) {
        const C* bc = bias.Chunk(first, count, buf.Get(2, count));
        for (int64_t i = 0; i < count; ++i) out[i] = f(in[i] + bias.At(first + i, bc, first));
      } else {
        for (int64_t i = 0; i < count; ++i) out[i] = f(in[i]);
      }
      CommitRange(out, count, y, first);
    });
    return Status::Ok();
  });
}

/// dx[i] = f(dy[i], x[i] (+ bias[i % len])) for the gradient ops with inputs (dY, X[, B]), a
/// chunk at a time.
template <typename F>
Status BinaryGrad(KernelContext& ctx, const char* second_name, int bias_index, F f) {
  MEMOPT_RETURN_IF_ERROR(RequireFloatInput(ctx, 0, "dY"));
  MEMOPT_RETURN_IF_ERROR(RequireFloatInput(ctx, 1, second_name));
  MEMOPT_RETURN_IF_ERROR(RequireSameSize(ctx, 0, 1));
  if (bias_index >= 0) MEMOPT_RETURN_IF_ERROR(CheckBias(ctx, 1, bias_index));
  const Tensor& dy = ctx.input(0);
  const Tensor& x = ctx.input(1);
  ctx.outputs[0] = Tensor::Uninitialized(dy.dtype(), x.shape());
  Tensor& dx = ctx.outputs[0];
  return DispatchCompute(ctx, dy.dtype(), [&]<typename C>() -> Status {
    const BiasReader<C> bias(bias_index >= 0 ? &ctx.input(bias_index) : nullptr, dy.numel());
    ForEachChunk<C>(dy.numel(), 20, [&](int64_t first, int64_t count, ChunkBuffers<C>& buf) {
      const C* g = ReadRange(dy, first, count, buf, 0);
      const C* xv = ReadRange(x, first, count, buf, 1);
      C* out = WriteRange(dx, first, count, buf, 2);
      if (bias.present()) {
        const C* bc = bias.Chunk(first, count, buf.Get(3, count));
        for (int64_t i = 0; i < count; ++i) out[i] = f(g[i], xv[i] + bias.At(first + i, bc, first));
      } else {
        for (int64_t i = 0; i < count; ++i) out[i] = f(g[i], xv[i]);
      }
      CommitRange(out, count, dx, first);
    });
    return Status::Ok();
  });
}

/// The `n` elements split over the threads as fn(first_element, count, buffers): rows of `row`
/// elements, each starting a bias row, when the bias is a row (0 < row < n, dividing n:
/// CheckBias); chunks of kChunkElements otherwise.
template <typename Fn>
void ForBiasRows(int64_t n, int64_t row, Fn&& fn) {
  if (row <= 0 || row == n) {
    ForEachChunk<float>(n, 20, fn);
    return;
  }
  ParallelFor(n / row, row * 20, [&](int64_t begin, int64_t end) {
    ChunkBuffers<float> buffers;
    for (int64_t r = begin; r < end; ++r) fn(r * row, row, buffers);
  });
}

/// Exact Gelu: float through the vectorised math (exec/math/vector_math.h), double via libm;
/// 16-bit tensors converted a chunk at a time.
Status GeluForward(KernelContext& ctx, int bias_index) {
  MEMOPT_RETURN_IF_ERROR(RequireFloatInput(ctx, 0, "X"));
  const bool has_bias = bias_index >= 0 && ctx.has_input(bias_index);
  if (has_bias) MEMOPT_RETURN_IF_ERROR(CheckBias(ctx, 0, bias_index));
  if (ctx.input(0).dtype() == DataType::kDouble) {
    return UnaryForward(ctx, bias_index, [](auto x) { return GeluValue(x); });
  }
  const Tensor& x = ctx.input(0);
  ctx.outputs[0] = Tensor::Uninitialized(x.dtype(), x.shape());
  Tensor& y = ctx.outputs[0];
  const BiasReader<float> bias(has_bias ? &ctx.input(bias_index) : nullptr, x.numel());
  ForBiasRows(x.numel(), has_bias ? ctx.input(bias_index).numel() : 0,
              [&](int64_t at, int64_t count, ChunkBuffers<float>& buf) {
                const float* in = ReadRange(x, at, count, buf, 0);
                float* out = WriteRange(y, at, count, buf, 1);
                math::GeluArray(in, bias.present() ? bias.Chunk(at, count, buf.Get(2, count)) : nullptr, out, count);
                CommitRange(out, count, y, at);
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
  const Tensor& x = ctx.input(1);
  ctx.outputs[0] = Tensor::Uninitialized(dy.dtype(), x.shape());
  Tensor& dx = ctx.outputs[0];
  const BiasReader<float> bias(bias_index >= 0 ? &ctx.input(bias_index) : nullptr, dy.numel());
  ForBiasRows(dy.numel(), bias_index >= 0 ? ctx.input(bias_index).numel() : 0,
              [&](int64_t at, int64_t count, ChunkBuffers<float>& buf) {
                const float* g = ReadRange(dy, at, count, buf, 0);
                const float* xv = ReadRange(x, at, count, buf, 1);
                float* out = WriteRange(dx, at, count, buf, 2);
                math::GeluGradArray(g, xv, bias.present() ? bias.Chunk(at, count, buf.Get(3, count)) : nullptr, out,
                                    count);
                CommitRange(out, count, dx, at);
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
