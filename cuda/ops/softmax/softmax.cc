// Softmax, LogSoftmax, their gradients, BiasSoftmax and the softmax cross-entropy losses (+Grad)
// on the GPU. The wrappers check nodes like the CPU kernels (lib/ops/softmax/softmax_cpu.cc, ops/loss/loss_cpu.cc,
// softmax_grad_cpu.cc, ops/loss/loss_grad_cpu.cc): the same attributes, defaults, opset rules
// and messages; device code in softmax.cu and sce_loss.cu.
#include <optional>
#include <string>
#include <vector>

#include "cuda_kernel.h"
#include "elem_type.h"
#include "kernel_util.h"
#include "softmax_launch.h"

namespace memopt::cuda {
namespace {

constexpr const char* kMs = "com.microsoft";

std::string ShapeText(const std::vector<int64_t>& s) {
  std::string t = "[";
  for (size_t i = 0; i < s.size(); ++i) t += (i ? ", " : "") + std::to_string(s[i]);
  return t + "]";
}

int64_t Product(const std::vector<int64_t>& s, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end; ++i) p *= s[i];
  return p;
}

/// Rows of `shape` at `axis`: one axis (opset >= 13), or shape[axis:] flattened (the 2-D view of
/// opset < 13, BiasSoftmax and the opset-11 gradients). Rank 0 is viewed as [1].
Expected<RowShape> RowsAt(const CudaKernelContext& ctx, std::vector<int64_t> shape, int64_t axis, bool coerce_2d) {
  if (shape.empty()) shape = {1};
  MEMOPT_ASSIGN_OR_RETURN(const int64_t a, NormalizeAxis(ctx, axis, static_cast<int64_t>(shape.size())));
  const size_t ax = static_cast<size_t>(a);
  RowShape r;
  r.outer = Product(shape, 0, ax);
  r.len = coerce_2d ? Product(shape, ax, shape.size()) : shape[ax];
  r.inner = coerce_2d ? 1 : Product(shape, ax + 1, shape.size());
  return r;
}

/// `t` as float32 (itself when it already is).
Expected<DeviceTensor> AsFloat32(const CudaKernelContext& ctx, const DeviceTensor& t) {
  if (t.dtype() == DataType::kFloat) return t;
  MEMOPT_ASSIGN_OR_RETURN(DeviceTensor f, DeviceTensor::Empty(ctx.pool, DataType::kFloat, t.shape()));
  MEMOPT_RETURN_IF_ERROR(
      Launched(ctx, LaunchCast(*ToElemType(t.dtype()), ElemType::kF32, t.raw(), f.raw(), t.numel(), ctx.stream())));
  return f;
}

/// Inputs of differing float types: the CPU converts each to float and rounds the float result
/// into the output, so do the same: convert the inputs to float32, run `launch(pointers, out)` in
/// float32 and cast the result into `out`. Scratch blocks go back to the pool in stream order.
template <typename F>
Status InFloat32(const CudaKernelContext& ctx, const std::vector<const DeviceTensor*>& ins, const DeviceTensor& out,
                 F&& launch) {
  std::vector<DeviceTensor> converted;
  std::vector<const void*> ptrs;
  for (const DeviceTensor* t : ins) {
    MEMOPT_ASSIGN_OR_RETURN(DeviceTensor f, AsFloat32(ctx, *t));
    ptrs.push_back(f.raw());
    converted.push_back(std::move(f));
  }
  if (out.dtype() == DataType::kFloat) return Launched(ctx, launch(ptrs, out.raw()));
  MEMOPT_ASSIGN_OR_RETURN(DeviceTensor result, DeviceTensor::Empty(ctx.pool, DataType::kFloat, out.shape()));
  MEMOPT_RETURN_IF_ERROR(Launched(ctx, launch(ptrs, result.raw())));
  return Launched(ctx, LaunchCast(ElemType::kF32, *ToElemType(out.dtype()), result.raw(), out.raw(), out.numel(),
                                  ctx.stream()));
}

Status SoftmaxFamily(CudaKernelContext& ctx, SoftmaxKind kind) {
  MEMOPT_RETURN_IF_ERROR(RequireFloat(ctx, 0, "input"));
  const DeviceTensor& x = ctx.input(0);
  // Before opset 13 the op works on the 2-D view at `axis` (default 1); since 13 on one axis.
  const int version = ctx.node->since_version == 0 ? 13 : ctx.node->since_version;
  const bool coerce = version < 13;
  MEMOPT_ASSIGN_OR_RETURN(RowShape rows, RowsAt(ctx, x.shape(), ctx.node->GetInt("axis", coerce ? 1 : -1), coerce));
  MEMOPT_RETURN_IF_ERROR(ctx.AllocateOutput(0, x.dtype(), x.shape()));
  return Launched(ctx, LaunchSoftmax(kind, *ToElemType(x.dtype()), x.raw(), nullptr, ctx.outputs[0].raw(), rows,
                                     ctx.stream()));
}

Status BiasSoftmax(CudaKernelContext& ctx) {
  MEMOPT_RETURN_IF_ERROR(RequireFloat(ctx, 0, "data"));
  MEMOPT_RETURN_IF_ERROR(RequireFloat(ctx, 1, "bias"));
  const DeviceTensor& x = ctx.input(0);
  const DeviceTensor& bias = ctx.input(1);
  if (!ctx.node->HasAttr("is_inner_broadcast")) return ctx.Error("attribute 'is_inner_broadcast' is required");
  const bool inner_broadcast = ctx.node->GetInt("is_inner_broadcast", 0) != 0;
  MEMOPT_ASSIGN_OR_RETURN(RowShape rows, RowsAt(ctx, x.shape(), ctx.node->GetInt("axis", 1), true));
  const int64_t e = rows.len;
  const int64_t bias_rows = e > 0 ? bias.numel() / e : 0;
  if (e > 0 && (bias.numel() % e != 0 || bias_rows == 0 || rows.outer % bias_rows != 0)) {
    return ctx.Error("bias " + ShapeText(bias.shape()) + " does not broadcast over data " + ShapeText(x.shape()) +
                     " (its size must be a multiple of the softmax row length " + std::to_string(e) +
                     " dividing the data size)");
  }
  MEMOPT_RETURN_IF_ERROR(ctx.AllocateOutput(0, x.dtype(), x.shape()));
  if (x.numel() == 0) return Status::Ok();
  SoftmaxBias b;
  b.bias_rows = bias_rows;
  b.repeat = rows.outer / bias_rows;
  b.inner_broadcast = inner_broadcast;
  if (x.dtype() == bias.dtype()) {
    b.data = bias.raw();
    return Launched(ctx, LaunchSoftmax(SoftmaxKind::kSoftmax, *ToElemType(x.dtype()), x.raw(), &b,
                                       ctx.outputs[0].raw(), rows, ctx.stream()));
  }
  return InFloat32(ctx, {&x, &bias}, ctx.outputs[0], [&](const std::vector<const void*>& in, void* out) {
    b.data = in[1];
    return LaunchSoftmax(SoftmaxKind::kSoftmax, ElemType::kF32, in[0], &b, out, rows, ctx.stream());
  });
}

Status SoftmaxGrad(CudaKernelContext& ctx, SoftmaxKind kind, bool opset13) {
  const bool log = kind == SoftmaxKind::kLogSoftmax;
  MEMOPT_RETURN_IF_ERROR(RequireFloat(ctx, 0, "dY"));
  MEMOPT_RETURN_IF_ERROR(RequireFloat(ctx, 1, log ? "X (LogSoftmax output)" : "Y (Softmax output)"));
  const DeviceTensor& dy = ctx.input(0);
  const DeviceTensor& y = ctx.input(1);
  if (dy.shape() != y.shape()) {
    return ctx.Error("dY " + dy.Describe() + " and the forward output " + y.Describe() + " must have the same shape");
  }
  if (dy.rank() == 0) return ctx.Error("input must have rank >= 1");
  MEMOPT_ASSIGN_OR_RETURN(RowShape rows, RowsAt(ctx, dy.shape(), ctx.node->GetInt("axis", opset13 ? -1 : 1), !opset13));
  MEMOPT_RETURN_IF_ERROR(ctx.AllocateOutput(0, dy.dtype(), dy.shape()));
  if (dy.dtype() == y.dtype()) {
    return Launched(ctx, LaunchSoftmaxGrad(kind, *ToElemType(dy.dtype()), dy.raw(), y.raw(), ctx.outputs[0].raw(),
                                           rows, ctx.stream()));
  }
  return InFloat32(ctx, {&dy, &y}, ctx.outputs[0], [&](const std::vector<const void*>& in, void* out) {
    return LaunchSoftmaxGrad(kind, ElemType::kF32, in[0], in[1], out, rows, ctx.stream());
  });
}

// ---------------------------------------------------------------------------------------------
// Softmax cross entropy.

Expected<LossReduction> ParseReduction(const CudaKernelContext& ctx, const char* expected) {
  const std::string r = ctx.node->GetString("reduction", "mean");
  if (r == "none") return LossReduction::kNone;
  if (r == "sum") return LossReduction::kSum;
  if (r == "mean") return LossReduction::kMean;
  return ctx.Error("unknown reduction '" + r + "' (expected " + expected + ")");
}

/// output_type (a float type), or `def` when the attribute is absent.
Expected<DataType> OutputType(const CudaKernelContext& ctx, DataType def) {
  if (!ctx.node->HasAttr("output_type")) return def;
  const int64_t t = ctx.node->GetInt("output_type", 0);
  const auto type = static_cast<DataType>(t);
  if (IsKnownDataType(static_cast<int32_t>(t)) && type == DataType::kDouble) return ctx.UnsupportedType(type);
  if (!IsKnownDataType(static_cast<int32_t>(t)) || !IsGpuFloat(type)) {
    return ctx.Error("output_type " + std::to_string(t) + " is not a floating type");
  }
  return type;
}

/// Fills `lw` from labels (input `li`, int32/int64, n * d entries), weights (input `wi`, optional,
/// `classes` entries) and the ignored label. Labels with a host mirror are range-checked here with
/// the CPU's message (`what` names them); larger ones give NaN on the device (softmax_launch.h).
Status ReadLabelWeights(const CudaKernelContext& ctx, int li, int wi, int64_t classes, std::optional<int64_t> ignore,
                        const char* what, LabelWeights* lw) {
  const DeviceTensor& labels = ctx.input(li);
  if (ctx.has_input(wi)) {
    MEMOPT_RETURN_IF_ERROR(RequireFloat(ctx, wi, "weights"));
    const DeviceTensor& w = ctx.input(wi);
    if (w.numel() != classes) {
      return ctx.Error("weights " + ShapeText(w.shape()) + " must have C = " + std::to_string(classes) + " entries");
    }
    lw->weights = w.raw();
    lw->weight_type = *ToElemType(w.dtype());
  }
  lw->label_type = labels.dtype() == DataType::kInt32 ? ElemType::kI32 : ElemType::kI64;
  lw->labels = labels.raw();
  lw->has_ignore = ignore.has_value();
  lw->ignore_index = ignore.value_or(0);
  if (const Tensor* host = labels.host_mirror()) {
    const std::vector<int64_t> values = host->ToInt64Vector();
    for (size_t i = 0; i < values.size(); ++i) {
      const int64_t y = values[i];
      if ((ignore && y == *ignore) || (y >= 0 && y < classes)) continue;
      return ctx.Error(std::string(what) + " " + std::to_string(y) + " at position " + std::to_string(i) +
                       " is outside [0, " + std::to_string(classes) + ")");
    }
  }
  return Status::Ok();
}

/// SoftmaxCrossEntropyLoss(scores, labels, weights?) with ignore_index an attribute, or
/// SoftmaxCrossEntropyLossInternal(scores, labels, weights?, ignore_index?) with output_type.
Status SceLoss(CudaKernelContext& ctx, bool internal) {
  MEMOPT_RETURN_IF_ERROR(RequireInput(ctx, 0, "scores"));
  MEMOPT_RETURN_IF_ERROR(RequireInput(ctx, 1, "labels"));
  std::optional<int64_t> ignore;
  DataType out_type = ctx.input(0).dtype();
  if (internal) {
    if (ctx.has_input(3)) {
      const DeviceTensor& ii = ctx.input(3);
      if (ii.numel() != 1) return ctx.Error("ignore_index must be a scalar, got " + ShapeText(ii.shape()));
      MEMOPT_ASSIGN_OR_RETURN(std::vector<int64_t> v, ii.ToInt64Vector());
      ignore = v[0];
    }
    MEMOPT_ASSIGN_OR_RETURN(out_type, OutputType(ctx, out_type));
  } else if (ctx.node->HasAttr("ignore_index")) {
    ignore = ctx.node->GetInt("ignore_index", 0);
  }
  const DeviceTensor& scores = ctx.input(0);
  const DeviceTensor& labels = ctx.input(1);
  if (scores.rank() < 2) return ctx.Error("scores " + ShapeText(scores.shape()) + " need rank >= 2 ([N, C, ...])");
  if (!IsGpuFloat(scores.dtype())) return ctx.UnsupportedType(scores.dtype());
  const int64_t n = scores.dim(0), c = scores.dim(1), d = Product(scores.shape(), 2, scores.shape().size());
  if (labels.dtype() != DataType::kInt32 && labels.dtype() != DataType::kInt64) {
    return ctx.UnsupportedType(labels.dtype());
  }
  if (labels.numel() != n * d) {
    return ctx.Error("labels " + ShapeText(labels.shape()) + " do not match the scores' [N, D1..Dk] = " +
                     std::to_string(n) + " x " + std::to_string(d) + " elements");
  }
  SceLossArgs a;
  MEMOPT_RETURN_IF_ERROR(ReadLabelWeights(ctx, 1, 2, c, ignore, "label", &a.lw));
  MEMOPT_ASSIGN_OR_RETURN(a.reduction, ParseReduction(ctx, "none, sum or mean"));

  const bool want_log_prob = ctx.outputs.size() > 1 && ctx.node->outputs[1] != kNone;
  if (a.reduction == LossReduction::kNone) {
    MEMOPT_RETURN_IF_ERROR(ctx.AllocateOutput(0, out_type, labels.shape()));
  } else {
    MEMOPT_RETURN_IF_ERROR(ctx.AllocateOutput(0, out_type, {}));
  }
  if (want_log_prob) {
    MEMOPT_RETURN_IF_ERROR(ctx.AllocateOutput(1, out_type, scores.shape()));
    a.log_prob = ctx.outputs[1].raw();
  }
  DeviceTensor scratch;  // per-sample losses and weights, summed in a fixed order
  if (a.reduction != LossReduction::kNone) {
    MEMOPT_ASSIGN_OR_RETURN(scratch, DeviceTensor::Empty(ctx.pool, DataType::kFloat, {2 * n * d}));
    a.scratch = scratch.data<float>();
  }
  a.scores_type = *ToElemType(scores.dtype());
  a.scores = scores.raw();
  a.shape = RowShape{n, c, d};
  a.out_type = *ToElemType(out_type);
  a.loss = ctx.outputs[0].raw();
  return Launched(ctx, LaunchSceLoss(a, ctx.stream()));
}

/// SoftmaxCrossEntropyLossInternalGrad(dY, log_prob, label, weight?, ignore_index?, bias?) or
/// SoftmaxCrossEntropyLossGrad(dY, log_prob, label, weight?) with ignore_index an attribute.
Status SceLossGrad(CudaKernelContext& ctx, bool internal) {
  MEMOPT_RETURN_IF_ERROR(RequireFloat(ctx, 0, "dY"));
  MEMOPT_RETURN_IF_ERROR(RequireFloat(ctx, 1, "log_prob"));
  MEMOPT_RETURN_IF_ERROR(RequireInput(ctx, 2, "label"));
  const DeviceTensor& dy = ctx.input(0);
  const DeviceTensor& lp = ctx.input(1);
  const DeviceTensor& label = ctx.input(2);
  if (label.dtype() != DataType::kInt32 && label.dtype() != DataType::kInt64) {
    return ctx.Error("label " + label.Describe() + " must be int32 or int64");
  }
  if (lp.rank() < 2) return ctx.Error("log_prob " + lp.Describe() + " must have rank >= 2 ([N, C, ...])");
  const int64_t n = lp.dim(0), classes = lp.dim(1), inner = Product(lp.shape(), 2, lp.shape().size());
  if (label.numel() != n * inner || label.rank() != lp.rank() - 1) {
    return ctx.Error("label " + label.Describe() + " does not match log_prob " + lp.Describe() +
                     " (expected [N, D1..Dk] for log_prob [N, C, D1..Dk])");
  }
  std::optional<int64_t> ignore;
  if (internal && ctx.has_input(4) && ctx.input(4).numel() > 0) {
    MEMOPT_ASSIGN_OR_RETURN(std::vector<int64_t> v, ctx.input(4).ToInt64Vector());
    ignore = v[0];
  } else if (ctx.node->HasAttr("ignore_index")) {
    ignore = ctx.node->GetInt("ignore_index", 0);
  }
  const bool has_bias = internal && ctx.has_input(5);
  if (has_bias) {
    MEMOPT_RETURN_IF_ERROR(RequireFloat(ctx, 5, "bias"));
    if (ctx.input(5).numel() != lp.numel()) {
      return ctx.Error("bias " + ctx.input(5).Describe() + " must have the shape of log_prob " + lp.Describe());
    }
  }
  SceLossGradArgs a;
  MEMOPT_ASSIGN_OR_RETURN(a.reduction, ParseReduction(ctx, "mean, sum or none"));
  if (a.reduction == LossReduction::kNone ? dy.numel() != label.numel() : dy.numel() != 1) {
    return ctx.Error("dY " + dy.Describe() + " does not match reduction '" +
                     ctx.node->GetString("reduction", "mean") + "' for label " + label.Describe());
  }
  MEMOPT_ASSIGN_OR_RETURN(const DataType out_type, OutputType(ctx, lp.dtype()));
  MEMOPT_RETURN_IF_ERROR(ReadLabelWeights(ctx, 2, 3, classes, ignore, "label value", &a.lw));
  MEMOPT_RETURN_IF_ERROR(ctx.AllocateOutput(0, out_type, lp.shape()));

  // log_prob and bias are read as one type: when they differ, both as float32 (exact).
  DeviceTensor lp_f32, bias_f32;
  a.log_prob_type = *ToElemType(lp.dtype());
  a.log_prob = lp.raw();
  if (has_bias) {
    a.bias = ctx.input(5).raw();
    if (ctx.input(5).dtype() != lp.dtype()) {
      MEMOPT_ASSIGN_OR_RETURN(lp_f32, AsFloat32(ctx, lp));
      MEMOPT_ASSIGN_OR_RETURN(bias_f32, AsFloat32(ctx, ctx.input(5)));
      a.log_prob_type = ElemType::kF32;
      a.log_prob = lp_f32.raw();
      a.bias = bias_f32.raw();
    }
  }
  DeviceTensor weight_sum;
  if (a.reduction == LossReduction::kMean) {
    MEMOPT_ASSIGN_OR_RETURN(weight_sum, DeviceTensor::Empty(ctx.pool, DataType::kDouble, {1}));
    a.weight_sum = weight_sum.data<double>();
  }
  a.dy_type = *ToElemType(dy.dtype());
  a.dy = dy.raw();
  a.shape = RowShape{n, classes, inner};
  a.out_type = *ToElemType(out_type);
  a.dx = ctx.outputs[0].raw();
  return Launched(ctx, LaunchSceLossGrad(a, ctx.stream()));
}

}  // namespace

MEMOPT_CUDA_OPS(softmax, softmax) {
  r.Register("", "Softmax", [](CudaKernelContext& ctx) { return SoftmaxFamily(ctx, SoftmaxKind::kSoftmax); });
  r.Register("", "LogSoftmax", [](CudaKernelContext& ctx) { return SoftmaxFamily(ctx, SoftmaxKind::kLogSoftmax); });
  r.Register(kMs, "BiasSoftmax", BiasSoftmax);
  r.Register(kMs, "SoftmaxGrad",
             [](CudaKernelContext& ctx) { return SoftmaxGrad(ctx, SoftmaxKind::kSoftmax, false); });
  r.Register(kMs, "SoftmaxGrad_13",
             [](CudaKernelContext& ctx) { return SoftmaxGrad(ctx, SoftmaxKind::kSoftmax, true); });
  r.Register(kMs, "LogSoftmaxGrad",
             [](CudaKernelContext& ctx) { return SoftmaxGrad(ctx, SoftmaxKind::kLogSoftmax, false); });
  r.Register(kMs, "LogSoftmaxGrad_13",
             [](CudaKernelContext& ctx) { return SoftmaxGrad(ctx, SoftmaxKind::kLogSoftmax, true); });
  r.Register("", "SoftmaxCrossEntropyLoss", [](CudaKernelContext& ctx) { return SceLoss(ctx, false); });
  r.Register(kMs, "SoftmaxCrossEntropyLossInternal", [](CudaKernelContext& ctx) { return SceLoss(ctx, true); });
  r.Register(kMs, "SoftmaxCrossEntropyLossGrad", [](CudaKernelContext& ctx) { return SceLossGrad(ctx, false); });
  r.Register(kMs, "SoftmaxCrossEntropyLossInternalGrad",
             [](CudaKernelContext& ctx) { return SceLossGrad(ctx, true); });
}

}  // namespace memopt::cuda
