// Accumulation, control and mixed-precision utility ops of training graphs (ort_training_ops.md
// section 4): InPlaceAccumulatorV2, InPlaceAccumulator, ZeroGradient, PassThrough, Group, Scale,
// IsAllFinite, IsFinite, MixedPrecisionScale, ReduceAllL2.
//
// Inputs are immutable in this executor, so the "in place" accumulators write their result to a
// new output tensor instead of mutating the buffer input (ORT aliases input 0 with the output).
// An InPlaceAccumulatorV2 whose buffer output is omitted therefore only reports its flag.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "exec/kernels/kernel_util.h"
#include "exec/kernels/training_util.h"
#include "ir/op_registry.h"

namespace memopt::training {
namespace {

/// out = (overwrite ? 0 : buffer) + value, value broadcast onto buffer's shape, in buffer's type.
Status Accumulate(KernelContext& ctx, const Tensor& buffer, const Tensor& value, bool overwrite, Tensor& out) {
  auto shape = BroadcastShape(buffer.shape(), value.shape());
  if (!shape || *shape != buffer.shape()) {
    return ctx.Error("value " + value.Describe() + " does not broadcast onto the buffer " + buffer.Describe());
  }
  out = Tensor(buffer.dtype(), buffer.shape());
  return DispatchCompute(ctx, buffer.dtype(), [&]<typename C>() -> Status {
    if (value.shape() != buffer.shape()) {  // a broadcast value (smaller): converted whole
      ChunkedReader<C> b(buffer);
      InView<C> v(value);
      ChunkedWriter<C> o(out);
      const std::vector<std::vector<int64_t>> strides = {BroadcastStrides(value.shape(), buffer.shape())};
      ForEachIndexed(buffer.shape(), strides, [&](int64_t i, const int64_t* off) {
        o[i] = overwrite ? v[off[0]] : b[i] + v[off[0]];
      });
      return Status::Ok();
    }
    // The same shape (a gradient into its buffer): a chunk at a time.
    ForEachChunk<C>(buffer.numel(), 2, [&](int64_t first, int64_t count, ChunkBuffers<C>& buf) {
      const C* v = ReadRange(value, first, count, buf, 0);
      C* o = WriteRange(out, first, count, buf, 1);
      if (overwrite) {
        std::copy(v, v + count, o);
      } else {
        const C* b = ReadRange(buffer, first, count, buf, 2);
        for (int64_t i = 0; i < count; ++i) o[i] = b[i] + v[i];
      }
      CommitRange(o, count, out, first);
    });
    return Status::Ok();
  });
}

// InPlaceAccumulatorV2(buffer, value, overwrite_flag?) -> updated_flag bool[1], buffer_out?
Status InPlaceAccumulatorV2Kernel(KernelContext& ctx) {
  MEMOPT_RETURN_IF_ERROR(RequireFloatInput(ctx, 0, "accumulation_buffer"));
  MEMOPT_RETURN_IF_ERROR(RequireFloatInput(ctx, 1, "value"));
  const bool overwrite = OptionalScalar(ctx, 2, 0.0) != 0.0;
  Tensor out;
  MEMOPT_RETURN_IF_ERROR(Accumulate(ctx, ctx.input(0), ctx.input(1), overwrite, out));
  ctx.outputs[0] = MakeBool(true, {1});
  if (ctx.output_wanted(1)) ctx.outputs[1] = std::move(out);
  return Status::Ok();
}

// InPlaceAccumulator(old_sum, value, update_signal?) -> new_sum (old_sum unchanged when the
// signal is given and false).
Status InPlaceAccumulatorKernel(KernelContext& ctx) {
  MEMOPT_RETURN_IF_ERROR(RequireFloatInput(ctx, 0, "old_sum"));
  MEMOPT_RETURN_IF_ERROR(RequireFloatInput(ctx, 1, "value"));
  if (ctx.has_input(2) && OptionalScalar(ctx, 2, 1.0) == 0.0) {
    ctx.outputs[0] = ctx.input(0).Clone();
    return Status::Ok();
  }
  return Accumulate(ctx, ctx.input(0), ctx.input(1), false, ctx.outputs[0]);
}

// ZeroGradient(old_gradient, reset_signal) -> zeros of old_gradient's type and shape.
Status ZeroGradientKernel(KernelContext& ctx) {
  MEMOPT_RETURN_IF_ERROR(RequireInput(ctx, 0, "old_gradient"));
  ctx.outputs[0] = Tensor(ctx.input(0).dtype(), ctx.input(0).shape());
  return Status::Ok();
}

// PassThrough(x...) -> x... (the outputs share the inputs' buffers).
Status PassThroughKernel(KernelContext& ctx) {
  for (size_t i = 0; i < ctx.outputs.size(); ++i) {
    if (!ctx.output_wanted(static_cast<int>(i))) continue;
    if (!ctx.has_input(static_cast<int>(i))) return ctx.Error("output " + std::to_string(i) + " has no input");
    ctx.outputs[i] = ctx.input(static_cast<int>(i));
  }
  return Status::Ok();
}

// Group(x...) -> bool scalar true (a dependency barrier).
Status GroupKernel(KernelContext& ctx) {
  ctx.outputs[0] = MakeBool(true, {});
  return Status::Ok();
}

// Scale(input, scale) attr scale_down: input * scale, or input / scale when scale_down = 1.
Status ScaleKernel(KernelContext& ctx) {
  MEMOPT_RETURN_IF_ERROR(RequireFloatInput(ctx, 0, "input"));
  MEMOPT_RETURN_IF_ERROR(RequireInput(ctx, 1, "scale"));
  const Tensor& x = ctx.input(0);
  if (ctx.input(1).numel() != 1) return ctx.Error("scale " + ctx.input(1).Describe() + " must be a scalar");
  const double s = ScalarAsDouble(ctx.input(1));
  const bool down = ctx.node->GetInt("scale_down", 0) != 0;
  ctx.outputs[0] = Tensor(x.dtype(), x.shape());
  Tensor& y = ctx.outputs[0];
  return DispatchCompute(ctx, x.dtype(), [&]<typename C>() -> Status {
    const C f = static_cast<C>(s);
    ForEachChunk<C>(x.numel(), 2, [&](int64_t first, int64_t count, ChunkBuffers<C>& buf) {
      const C* in = ReadRange(x, first, count, buf, 0);
      C* out = WriteRange(y, first, count, buf, 1);
      for (int64_t i = 0; i < count; ++i) out[i] = down ? in[i] / f : in[i] * f;
      CommitRange(out, count, y, first);
    });
    return Status::Ok();
  });
}

/// Elementwise check used by IsAllFinite / IsFinite (isinf_only: not inf; isnan_only: not NaN).
bool Passes(double v, bool inf_only, bool nan_only) {
  if (inf_only) return !std::isinf(v);
  if (nan_only) return !std::isnan(v);
  return std::isfinite(v);
}

// IsAllFinite(x...) attrs isinf_only, isnan_only -> bool scalar.
Status IsAllFiniteKernel(KernelContext& ctx) {
  const bool inf_only = ctx.node->GetInt("isinf_only", 0) != 0;
  const bool nan_only = ctx.node->GetInt("isnan_only", 0) != 0;
  bool all = true;
  for (int i = 0; i < ctx.num_inputs() && all; ++i) {
    if (!ctx.has_input(i)) continue;
    MEMOPT_RETURN_IF_ERROR(RequireFloatInput(ctx, i, "input"));
    MEMOPT_RETURN_IF_ERROR(DispatchCompute(ctx, ctx.input(i).dtype(), [&]<typename C>() -> Status {
      const Tensor& x = ctx.input(i);
      std::vector<C> buf(static_cast<size_t>(std::min<int64_t>(x.numel(), kChunkElements)));
      for (int64_t first = 0; first < x.numel() && all; first += kChunkElements) {
        const int64_t count = std::min<int64_t>(kChunkElements, x.numel() - first);
        const C* in = ReadRange(x, first, count, buf.data());
        for (int64_t k = 0; k < count && all; ++k) all = Passes(in[k], inf_only, nan_only);
      }
      return Status::Ok();
    }));
  }
  ctx.outputs[0] = MakeBool(all, {});
  return Status::Ok();
}

// IsFinite(X) -> bool, elementwise.
Status IsFiniteKernel(KernelContext& ctx) {
  MEMOPT_RETURN_IF_ERROR(RequireFloatInput(ctx, 0, "X"));
  const Tensor& x = ctx.input(0);
  ctx.outputs[0] = Tensor(DataType::kBool, x.shape());
  uint8_t* out = ctx.outputs[0].data<uint8_t>();
  return DispatchCompute(ctx, x.dtype(), [&]<typename C>() -> Status {
    ForEachChunk<C>(x.numel(), 1, [&](int64_t first, int64_t count, ChunkBuffers<C>& buf) {
      const C* in = ReadRange(x, first, count, buf, 0);
      for (int64_t k = 0; k < count; ++k) out[first + k] = std::isfinite(in[k]) ? 1 : 0;
    });
    return Status::Ok();
  });
}

// MixedPrecisionScale(S, X...) attrs to (required), fuse_outputs: Y_i = cast_to(X_i * S); with
// fuse_outputs = 1 a single 1-D output holds every scaled input back to back.
Status MixedPrecisionScaleKernel(KernelContext& ctx) {
  MEMOPT_RETURN_IF_ERROR(RequireFloatInput(ctx, 0, "S"));
  if (!ctx.node->HasAttr("to")) return ctx.Error("missing required attribute 'to'");
  const DataType to = static_cast<DataType>(ctx.node->GetInt("to", 0));
  if (!IsFloatType(to)) return ctx.Error("attribute 'to' = " + DataTypeName(to) + " is not a float type");
  const double s = ScalarAsDouble(ctx.input(0));
  const bool fuse = ctx.node->GetInt("fuse_outputs", 0) != 0;
  int64_t total = 0;
  for (int i = 1; i < ctx.num_inputs(); ++i) {
    MEMOPT_RETURN_IF_ERROR(RequireFloatInput(ctx, i, "X"));
    total += ctx.input(i).numel();
  }
  if (fuse) ctx.outputs[0] = Tensor(to, {total});
  int64_t offset = 0;
  for (int i = 1; i < ctx.num_inputs(); ++i) {
    const Tensor& x = ctx.input(i);
    if (!fuse && !ctx.output_wanted(i - 1)) continue;
    if (!fuse) ctx.outputs[i - 1] = Tensor(to, x.shape());
    Tensor& y = fuse ? ctx.outputs[0] : ctx.outputs[i - 1];
    const int64_t at = fuse ? offset : 0;
    // In double, a chunk at a time, then rounded to `to` (through float for 16-bit types).
    ForEachChunk<double>(x.numel(), 2, [&](int64_t first, int64_t count, ChunkBuffers<double>& buf) {
      double* v = buf.Get(0, count);
      ConvertRange(x, first, count, v);
      for (int64_t k = 0; k < count; ++k) v[k] *= s;
      if (fuse) {
        for (int64_t k = 0; k < count; ++k) y.SetFromDouble(at + first + k, v[k]);
      } else {
        StoreRange(v, count, y, first);
      }
    });
    if (fuse) offset += x.numel();
  }
  return Status::Ok();
}

// ReduceAllL2(x...) -> scalar sqrt(sum of squares of every element), in the first input's type.
Status ReduceAllL2Kernel(KernelContext& ctx) {
  MEMOPT_RETURN_IF_ERROR(RequireFloatInput(ctx, 0, "X"));
  double sum = 0;
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    if (!ctx.has_input(i)) continue;
    MEMOPT_RETURN_IF_ERROR(RequireFloatInput(ctx, i, "X"));
    const Tensor& x = ctx.input(i);
    std::vector<double> v(static_cast<size_t>(std::min<int64_t>(x.numel(), kChunkElements)));
    for (int64_t first = 0; first < x.numel(); first += kChunkElements) {
      const int64_t count = std::min<int64_t>(kChunkElements, x.numel() - first);
      ConvertRange(x, first, count, v.data());
      for (int64_t k = 0; k < count; ++k) sum += v[static_cast<size_t>(k)] * v[static_cast<size_t>(k)];
    }
  }
  ctx.outputs[0] = Tensor(ctx.input(0).dtype(), {});
  ctx.outputs[0].SetFromDouble(0, std::sqrt(sum));
  return Status::Ok();
}

}  // namespace

static void RegisterAccumKernels(OpRegistry& r) {
  const auto types = FloatTypes();
  r.SetCpuKernel(kMsDomain, "InPlaceAccumulatorV2", InPlaceAccumulatorV2Kernel, types);
  r.SetCpuKernel(kMsDomain, "InPlaceAccumulator", InPlaceAccumulatorKernel, types);
  r.SetCpuKernel(kMsDomain, "ZeroGradient", ZeroGradientKernel);
  r.SetCpuKernel(kMsDomain, "PassThrough", PassThroughKernel);
  r.SetCpuKernel(kMsDomain, "Group", GroupKernel);
  r.SetCpuKernel(kMsDomain, "Scale", ScaleKernel, types);
  r.SetCpuKernel(kMsDomain, "IsAllFinite", IsAllFiniteKernel, types);
  r.SetCpuKernel(kMsDomain, "IsFinite", IsFiniteKernel, types);
  r.SetCpuKernel(kMsDomain, "MixedPrecisionScale", MixedPrecisionScaleKernel, types);
  r.SetCpuKernel(kMsDomain, "ReduceAllL2", ReduceAllL2Kernel, types);
}

}  // namespace memopt::training

MEMOPT_OPS(training, accum_cpu) {
  memopt::training::RegisterAccumKernels(ops);
}
