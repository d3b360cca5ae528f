// Softmax-family gradients and the fused BiasSoftmaxDropout (ort_training_ops.md 2.9, 3.7-3.9):
//   SoftmaxGrad / LogSoftmaxGrad         rows = 2-D view at axis (opset-11 Softmax), axis default 1
//   SoftmaxGrad_13 / LogSoftmaxGrad_13   rows along the single axis (opset-13), axis default -1
//   SoftmaxDropoutGrad                   dropout-then-softmax gradient, opset-11 rows
//   BiasSoftmaxDropout                   BiasSoftmax then Dropout (always training), Philox mask
// Row sums accumulate in double.
#include <cmath>
#include <type_traits>
#include <vector>

#include "exec/kernels/kernel_util.h"
#include "exec/kernels/training_util.h"
#include "exec/math/vector_math.h"
#include "ir/op_registry.h"

namespace memopt::training {
namespace {

/// Element (o, d, i) of a tensor viewed as [outer, len, inner] lives at (o*len + d)*inner + i.
struct RowLayout {
  int64_t outer = 1;
  int64_t len = 1;
  int64_t inner = 1;
};

/// opset-11 (flatten_tail = true: rows are shape[axis:] flattened) or opset-13 (single axis).
Expected<RowLayout> MakeLayout(const KernelContext& ctx, const std::vector<int64_t>& shape, int64_t axis,
                               bool flatten_tail) {
  const int64_t rank = static_cast<int64_t>(shape.size());
  if (rank == 0) return ctx.Error("input must have rank >= 1");
  MEMOPT_ASSIGN_OR_RETURN(int64_t a, AxisOrError(ctx, axis, rank));
  RowLayout l;
  l.outer = ShapeProduct(shape, 0, a);
  if (flatten_tail) {
    l.len = ShapeProduct(shape, a, rank);
  } else {
    l.len = shape[static_cast<size_t>(a)];
    l.inner = ShapeProduct(shape, a + 1, rank);
  }
  return l;
}

/// Calls fn(base, stride, buffers) for every row of the layout (rows in parallel; each thread's
/// row buffers passed along).
template <typename C, typename F>
void ForEachRow(const RowLayout& l, F fn) {
  ParallelFor(l.outer * l.inner, 4 * l.len, [&](int64_t begin, int64_t end) {
    ChunkBuffers<C> buffers;
    for (int64_t r = begin; r < end; ++r) fn((r / l.inner) * l.len * l.inner + r % l.inner, l.inner, buffers);
  });
}

Status SoftmaxGradImpl(KernelContext& ctx, bool log_softmax, bool opset13) {
  MEMOPT_RETURN_IF_ERROR(RequireFloatInput(ctx, 0, "dY"));
  MEMOPT_RETURN_IF_ERROR(RequireFloatInput(ctx, 1, log_softmax ? "X (LogSoftmax output)" : "Y (Softmax output)"));
  const Tensor& dy = ctx.input(0);
  const Tensor& y = ctx.input(1);
  if (dy.shape() != y.shape()) {
    return ctx.Error("dY " + dy.Describe() + " and the forward output " + y.Describe() + " must have the same shape");
  }
  const int64_t axis = ctx.node->GetInt("axis", opset13 ? -1 : 1);
  MEMOPT_ASSIGN_OR_RETURN(RowLayout layout, MakeLayout(ctx, dy.shape(), axis, !opset13));
  ctx.outputs[0] = Tensor::Uninitialized(dy.dtype(), dy.shape());  // every row is written
  // Rows are read (and written) one at a time: float16 tensors are not copied to float whole.
  Tensor& dx = ctx.outputs[0];
  const bool float_rows = dy.dtype() == DataType::kFloat && y.dtype() == DataType::kFloat;
  return DispatchCompute(ctx, dy.dtype(), [&]<typename C>() -> Status {
    const size_t len = static_cast<size_t>(layout.len);
    ForEachRow<C>(layout, [&](int64_t base, int64_t stride, ChunkBuffers<C>& buf) {
      const C* g = ReadStrided(dy, base, stride, layout.len, buf.Get(0, len));
      const C* fwd = ReadStrided(y, base, stride, layout.len, buf.Get(1, len));
      const bool direct = stride == 1 && StoredAs<C>(dx);
      C* out = direct ? dx.data<C>() + base : buf.Get(2, len);
      double sum = 0;
      if (log_softmax) {
        for (int64_t d = 0; d < layout.len; ++d) sum += g[d];
        const C s = static_cast<C>(sum);
        for (int64_t d = 0; d < layout.len; ++d) out[d] = g[d] - std::exp(fwd[d]) * s;
      } else {
        // Contiguous float rows (attention's): the dot product vectorised; others in order.
        const bool vectorised = std::is_same_v<C, float> && stride == 1 && float_rows;
        if constexpr (std::is_same_v<C, float>) {
          if (vectorised) sum = math::DotInDouble(g, fwd, layout.len);
        }
        for (int64_t d = 0; d < layout.len && !vectorised; ++d) {
          sum += static_cast<double>(g[d]) * static_cast<double>(fwd[d]);
        }
        const C s = static_cast<C>(sum);
        for (int64_t d = 0; d < layout.len; ++d) out[d] = fwd[d] * (g[d] - s);
      }
      if (!direct) StoreStrided(out, layout.len, dx, base, stride);
    });
    return Status::Ok();
  });
}

Status SoftmaxGradKernel(KernelContext& ctx) { return SoftmaxGradImpl(ctx, false, false); }
Status SoftmaxGrad13Kernel(KernelContext& ctx) { return SoftmaxGradImpl(ctx, false, true); }
Status LogSoftmaxGradKernel(KernelContext& ctx) { return SoftmaxGradImpl(ctx, true, false); }
Status LogSoftmaxGrad13Kernel(KernelContext& ctx) { return SoftmaxGradImpl(ctx, true, true); }

// SoftmaxDropoutGrad(dy, mask, softmax_y, ratio?): g = dy*mask/(1-ratio); dx = y*(g - sum(y*g)).
Status SoftmaxDropoutGradKernel(KernelContext& ctx) {
  MEMOPT_RETURN_IF_ERROR(RequireFloatInput(ctx, 0, "dy"));
  MEMOPT_RETURN_IF_ERROR(RequireInput(ctx, 1, "mask"));
  MEMOPT_RETURN_IF_ERROR(RequireFloatInput(ctx, 2, "softmax_y"));
  const Tensor& dy = ctx.input(0);
  const Tensor& mask = ctx.input(1);
  const Tensor& y = ctx.input(2);
  if (mask.dtype() != DataType::kBool) return ctx.Error("mask must be bool, got " + mask.Describe());
  if (dy.shape() != y.shape() || mask.numel() != dy.numel()) {
    return ctx.Error("dy " + dy.Describe() + ", mask " + mask.Describe() + " and softmax_y " + y.Describe() +
                     " must have the same shape");
  }
  MEMOPT_ASSIGN_OR_RETURN(float ratio, ReadDropoutRatio(ctx, 3));
  MEMOPT_ASSIGN_OR_RETURN(RowLayout layout, MakeLayout(ctx, dy.shape(), ctx.node->GetInt("axis", 1), true));
  ctx.outputs[0] = Tensor::Uninitialized(dy.dtype(), dy.shape());  // every row is written
  const uint8_t* keep = mask.data<uint8_t>();
  Tensor& dx = ctx.outputs[0];
  return DispatchCompute(ctx, dy.dtype(), [&]<typename C>() -> Status {
    const C scale = static_cast<C>(DropoutScale(ratio));
    const size_t len = static_cast<size_t>(layout.len);
    ForEachRow<C>(layout, [&](int64_t base, int64_t, ChunkBuffers<C>& buf) {
      const C* g = ReadRange(dy, base, layout.len, buf, 0);
      const C* sm = ReadRange(y, base, layout.len, buf, 1);
      C* out = WriteRange(dx, base, len, buf, 2);
      auto masked = [&](int64_t d) { return keep[base + d] ? g[d] * scale : C(0); };
      double sum = 0;
      for (int64_t d = 0; d < layout.len; ++d) sum += static_cast<double>(masked(d)) * static_cast<double>(sm[d]);
      const C s = static_cast<C>(sum);
      for (int64_t d = 0; d < layout.len; ++d) out[d] = sm[d] * (masked(d) - s);
      CommitRange(out, layout.len, dx, base);
    });
    return Status::Ok();
  });
}

// BiasSoftmaxDropout(data, bias, ratio?) -> (dropout_output, mask, softmax_output).
Status BiasSoftmaxDropoutKernel(KernelContext& ctx) {
  MEMOPT_RETURN_IF_ERROR(RequireFloatInput(ctx, 0, "data"));
  MEMOPT_RETURN_IF_ERROR(RequireFloatInput(ctx, 1, "bias"));
  const Tensor& data = ctx.input(0);
  const Tensor& bias = ctx.input(1);
  MEMOPT_ASSIGN_OR_RETURN(RowLayout layout, MakeLayout(ctx, data.shape(), ctx.node->GetInt("axis", 1), true));
  if (!ctx.node->HasAttr("is_inner_broadcast")) return ctx.Error("missing required attribute is_inner_broadcast");
  const bool inner_broadcast = ctx.node->GetInt("is_inner_broadcast", 0) != 0;
  const int64_t rows = layout.outer;
  const int64_t row_len = layout.len;
  const int64_t bias_rows = row_len > 0 ? bias.numel() / row_len : 0;
  if (row_len > 0 && (bias_rows == 0 || bias.numel() % row_len != 0 || rows % bias_rows != 0)) {
    return ctx.Error("bias " + bias.Describe() + " does not broadcast onto data " + data.Describe() +
                     " at the softmax axis");
  }
  MEMOPT_ASSIGN_OR_RETURN(float ratio, ReadDropoutRatio(ctx, 2));
  ctx.outputs[0] = Tensor(data.dtype(), data.shape());
  ctx.outputs[1] = Tensor(DataType::kBool, data.shape());
  if (ctx.output_wanted(2)) ctx.outputs[2] = Tensor(data.dtype(), data.shape());
  uint8_t* keep = ctx.outputs[1].data<uint8_t>();
  FillDropoutMask(DropoutSeed(ctx), ratio, data.numel(), keep);
  const bool want_softmax = ctx.output_wanted(2);
  return DispatchCompute(ctx, data.dtype(), [&]<typename C>() -> Status {
    const C scale = static_cast<C>(DropoutScale(ratio));
    const int64_t repeat = bias_rows > 0 ? rows / bias_rows : 1;
    const size_t len = static_cast<size_t>(row_len);
    ParallelFor(rows, 8 * row_len, [&](int64_t begin, int64_t end) {
      ChunkBuffers<C> buf;
      for (int64_t r = begin; r < end; ++r) {
        const int64_t rb = inner_broadcast ? r / repeat : r % bias_rows;
        const C* xr = ReadRange(data, r * row_len, row_len, buf, 0);
        const C* br = ReadRange(bias, rb * row_len, row_len, buf, 1);
        C* sr = buf.Get(2, len);
        C* dr = buf.Get(3, len);
        C mx = -INFINITY;
        for (int64_t d = 0; d < row_len; ++d) {
          sr[d] = xr[d] + br[d];
          if (sr[d] > mx) mx = sr[d];
        }
        double sum = 0;
        for (int64_t d = 0; d < row_len; ++d) {
          sr[d] = std::exp(sr[d] - mx);
          sum += sr[d];
        }
        const C inv = static_cast<C>(1.0 / sum);
        for (int64_t d = 0; d < row_len; ++d) {
          sr[d] *= inv;
          dr[d] = keep[r * row_len + d] ? sr[d] * scale : C(0);
        }
        StoreRange(dr, row_len, ctx.outputs[0], r * row_len);
        if (want_softmax) StoreRange(sr, row_len, ctx.outputs[2], r * row_len);
      }
    });
    return Status::Ok();
  });
}

bool BiasSoftmaxDropoutIsRandom(const KernelContext& ctx) { return OptionalScalar(ctx, 2, 0.5) > 0.0; }

}  // namespace

static void RegisterSoftmaxGradKernels(OpRegistry& r) {
  const auto types = FloatTypes();
  r.SetCpuKernel(kMsDomain, "SoftmaxGrad", SoftmaxGradKernel, types);
  r.SetCpuKernel(kMsDomain, "SoftmaxGrad_13", SoftmaxGrad13Kernel, types);
  r.SetCpuKernel(kMsDomain, "LogSoftmaxGrad", LogSoftmaxGradKernel, types);
  r.SetCpuKernel(kMsDomain, "LogSoftmaxGrad_13", LogSoftmaxGrad13Kernel, types);
  r.SetCpuKernel(kMsDomain, "SoftmaxDropoutGrad", SoftmaxDropoutGradKernel, types);
  KernelInfo fused(BiasSoftmaxDropoutKernel, types);
  fused.is_random = BiasSoftmaxDropoutIsRandom;
  r.SetCpuKernel(kMsDomain, "BiasSoftmaxDropout", std::move(fused));
}

}  // namespace memopt::training

MEMOPT_OPS(softmax, softmax_grad_cpu) {
  memopt::training::RegisterSoftmaxGradKernels(ops);
}
