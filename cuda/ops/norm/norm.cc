// Node-level wrappers of the layer normalisations: LayerNormalization, SimplifiedLayerNormalization,
// RMSNormalization, com.microsoft SkipLayerNormalization / SkipSimplifiedLayerNormalization, and
// the com.microsoft gradients LayerNormalizationGrad, SimplifiedLayerNormalizationGrad and
// InvertibleLayerNormalizationGrad. Every op decodes its inputs and attributes with the CPU
// kernels' decode (ops/norm/layer_norm.h).
#include <string>
#include <vector>

#include "cuda_kernel.h"
#include "elem_type.h"
#include "exec/kernels/kernel_util.h"
#include "kernel_util.h"
#include "norm_launch.h"
#include "ops/norm/layer_norm.h"

namespace memopt::cuda {


namespace {

/// The element types the kernels pair: equal, or one of them float32.
Status CheckTypePair(const CudaKernelContext& ctx, DataType x, DataType param) {
  if (x == param || x == DataType::kFloat || param == DataType::kFloat) return Status::Ok();
  return Unsupported("node " + ctx.node->Describe() + ": X of type " + DataTypeName(x) + " with parameters of type " +
                     DataTypeName(param) + " is not supported on the GPU");
}

Status CheckSameType(const CudaKernelContext& ctx, const DeviceTensor& t, const char* name, DataType want) {
  if (t.dtype() == want) return Status::Ok();
  return Unsupported("node " + ctx.node->Describe() + ": " + name + " of type " + DataTypeName(t.dtype()) +
                     " must have type " + DataTypeName(want) + " on the GPU");
}

using norm::NormRows;

/// A per-row parameter (Scale, B) as `cols` contiguous elements: the input itself when it has
/// that many, else its broadcast (right-aligned, checked by the decode) to the normalised shape,
/// copied into `tmp`.
Expected<const void*> ParamData(const CudaKernelContext& ctx, const DeviceTensor& param, const NormRows& v,
                                DeviceTensor& tmp) {
  if (param.numel() == v.cols) return param.raw();
  auto bc = MakeBroadcast(param.shape(), param.shape(), v.row_shape);
  if (!bc.ok()) return ctx.Error(bc.status().message());
  MEMOPT_ASSIGN_OR_RETURN(tmp, DeviceTensor::Empty(ctx.pool, param.dtype(), v.row_shape));
  MEMOPT_RETURN_IF_ERROR(Launched(ctx, LaunchBinary(BinaryOp::kCopyA, *ToElemType(param.dtype()), param.raw(),
                                                    param.raw(), tmp.raw(), v.cols, &*bc, ctx.stream())));
  return static_cast<const void*>(tmp.raw());
}

/// LayerNormalization (simplified = false) and the RMS forms: X, Scale, B at bias_input (-1:
/// none); outputs Y (Scale's type), Mean at out_mean and InvStdDev at out_inv (-1: none) in the
/// stash type (double for stash_type = 11, else float).
Status NormalizeLastDims(CudaKernelContext& ctx, bool simplified, int bias_input, int out_mean, int out_inv) {
  MEMOPT_RETURN_IF_ERROR(RequireFloat(ctx, 0, "X"));
  if (!ctx.has_input(1)) return ctx.Error("Scale is required");
  const DeviceTensor& x = ctx.input(0);
  const DeviceTensor& scale = ctx.input(1);
  if (!IsGpuFloat(scale.dtype())) return ctx.UnsupportedType(scale.dtype());
  MEMOPT_RETURN_IF_ERROR(CheckTypePair(ctx, x.dtype(), scale.dtype()));
  const DeviceTensor* bias = bias_input >= 0 && ctx.has_input(bias_input) ? &ctx.input(bias_input) : nullptr;
  if (bias != nullptr) MEMOPT_RETURN_IF_ERROR(CheckSameType(ctx, *bias, "B", scale.dtype()));
  const Tensor bias_meta = bias != nullptr ? bias->Meta() : Tensor();
  auto plan = norm::DecodeLayerNorm(*ctx.node, x.Meta(), scale.Meta(), bias != nullptr ? &bias_meta : nullptr);
  if (!plan.ok()) return ctx.Error(plan.status().message());
  const NormRows& v = plan->rows;
  DeviceTensor scale_tmp, bias_tmp;
  LayerNormArgs a;
  MEMOPT_ASSIGN_OR_RETURN(a.scale, ParamData(ctx, scale, v, scale_tmp));
  if (bias != nullptr) {
    MEMOPT_ASSIGN_OR_RETURN(a.bias, ParamData(ctx, *bias, v, bias_tmp));
  }
  const bool stash_double = plan->stash == DataType::kDouble;
  const DataType stash = plan->stash;
  MEMOPT_RETURN_IF_ERROR(ctx.AllocateOutput(0, scale.dtype(), x.shape()));
  if (ctx.output_wanted(out_mean)) MEMOPT_RETURN_IF_ERROR(ctx.AllocateOutput(out_mean, stash, v.stat_shape));
  if (ctx.output_wanted(out_inv)) MEMOPT_RETURN_IF_ERROR(ctx.AllocateOutput(out_inv, stash, v.stat_shape));
  a.x = x.raw();
  a.y = ctx.outputs[0].raw();
  a.mean = ctx.output_wanted(out_mean) ? ctx.outputs[out_mean].raw() : nullptr;
  a.inv_std = ctx.output_wanted(out_inv) ? ctx.outputs[out_inv].raw() : nullptr;
  a.stats_double = stash_double;
  a.simplified = simplified;
  a.epsilon = static_cast<float>(plan->epsilon);
  a.rows = v.rows;
  a.cols = v.cols;
  return Launched(ctx, LaunchLayerNorm(*ToElemType(x.dtype()), *ToElemType(scale.dtype()), a, ctx.stream()));
}

/// SkipLayerNormalization (input, skip, gamma, beta?, bias?) and SkipSimplifiedLayerNormalization
/// (input, skip, gamma, bias?): normalises input + skip + bias over the last axis; outputs
/// output, mean?, inv_std_var? (float), input_skip_bias_sum?. skip may repeat over leading rows.
Status SkipNorm(CudaKernelContext& ctx, bool simplified) {
  MEMOPT_RETURN_IF_ERROR(RequireFloat(ctx, 0, "input"));
  const DeviceTensor& x = ctx.input(0);
  auto plan = norm::DecodeSkipNorm(*ctx.node, InputMetas(ctx).list(), simplified);
  if (!plan.ok()) return ctx.Error(plan.status().message());
  const DeviceTensor& skip = ctx.input(1);
  const DeviceTensor& gamma = ctx.input(2);
  const DeviceTensor* beta = plan->beta_input >= 0 ? &ctx.input(plan->beta_input) : nullptr;
  const DeviceTensor* bias = plan->bias_input >= 0 ? &ctx.input(plan->bias_input) : nullptr;
  MEMOPT_RETURN_IF_ERROR(CheckSameType(ctx, skip, "skip", x.dtype()));
  for (const DeviceTensor* p : {&gamma, beta, bias}) {
    if (p != nullptr) MEMOPT_RETURN_IF_ERROR(CheckSameType(ctx, *p, "gamma/beta/bias", x.dtype()));
  }
  MEMOPT_RETURN_IF_ERROR(ctx.AllocateOutput(0, x.dtype(), x.shape()));
  for (int i : {1, 2}) {
    if (ctx.output_wanted(i)) MEMOPT_RETURN_IF_ERROR(ctx.AllocateOutput(i, DataType::kFloat, plan->stat_shape));
  }
  if (ctx.output_wanted(3)) MEMOPT_RETURN_IF_ERROR(ctx.AllocateOutput(3, x.dtype(), x.shape()));
  LayerNormArgs a;
  a.x = x.raw();
  a.skip = skip.raw();
  a.skip_rows = plan->skip_rows;
  a.pre_bias = bias != nullptr ? bias->raw() : nullptr;
  a.scale = gamma.raw();
  a.bias = beta != nullptr ? beta->raw() : nullptr;
  a.y = ctx.outputs[0].raw();
  a.mean = ctx.output_wanted(1) ? ctx.outputs[1].raw() : nullptr;
  a.inv_std = ctx.output_wanted(2) ? ctx.outputs[2].raw() : nullptr;
  a.sum_out = ctx.output_wanted(3) ? ctx.outputs[3].raw() : nullptr;
  a.simplified = simplified;
  a.epsilon = static_cast<float>(plan->epsilon);
  a.rows = plan->rows;
  a.cols = plan->hidden;
  const ElemType t = *ToElemType(x.dtype());
  return Launched(ctx, LaunchLayerNorm(t, t, a, ctx.stream()));
}

/// A per-row statistic of the gradients (shape checked by the decode): float or double.
Status CheckStatType(const CudaKernelContext& ctx, int i) {
  const DataType t = ctx.input(i).dtype();
  if (t != DataType::kFloat && t != DataType::kDouble) return ctx.UnsupportedType(t);
  return Status::Ok();
}

LayerNormGradKind LaunchKind(norm::GradKind kind) {
  switch (kind) {
    case norm::GradKind::kFull:
      return LayerNormGradKind::kFull;
    case norm::GradKind::kSimplified:
      return LayerNormGradKind::kSimplified;
    case norm::GradKind::kInvertible:
      return LayerNormGradKind::kInvertible;
  }
  return LayerNormGradKind::kFull;
}

/// LayerNormalizationGrad, SimplifiedLayerNormalizationGrad, InvertibleLayerNormalizationGrad
/// (decode: ops/norm/layer_norm.h). Outputs dX, dScale?, dBias? (not for the simplified form).
Status LayerNormGrad(CudaKernelContext& ctx) {
  MEMOPT_RETURN_IF_ERROR(RequireFloat(ctx, 0, "Y_grad"));
  auto plan = norm::DecodeLayerNormGrad(*ctx.node, InputMetas(ctx).list());
  if (!plan.ok()) return ctx.Error(plan.status().message());
  const LayerNormGradKind kind = LaunchKind(plan->kind);
  const NormRows& v = plan->rows;
  MEMOPT_RETURN_IF_ERROR(RequireFloat(ctx, 1, kind == LayerNormGradKind::kInvertible ? "Y" : "X"));
  MEMOPT_RETURN_IF_ERROR(RequireFloat(ctx, 2, "scale"));
  const DeviceTensor& dy = ctx.input(0);
  const DeviceTensor& x = ctx.input(1);
  const DeviceTensor& scale = ctx.input(2);
  if (plan->bias_input >= 0) {
    MEMOPT_RETURN_IF_ERROR(RequireFloat(ctx, plan->bias_input, "bias"));
    MEMOPT_RETURN_IF_ERROR(CheckSameType(ctx, ctx.input(plan->bias_input), "bias", scale.dtype()));
  }
  MEMOPT_RETURN_IF_ERROR(CheckStatType(ctx, plan->inv_input));
  const DeviceTensor& inv = ctx.input(plan->inv_input);
  if (plan->mean_input >= 0) {
    MEMOPT_RETURN_IF_ERROR(CheckStatType(ctx, plan->mean_input));
    MEMOPT_RETURN_IF_ERROR(CheckSameType(ctx, ctx.input(plan->mean_input), "mean", inv.dtype()));
  }
  MEMOPT_RETURN_IF_ERROR(CheckSameType(ctx, dy, "Y_grad", x.dtype()));
  MEMOPT_RETURN_IF_ERROR(CheckTypePair(ctx, x.dtype(), scale.dtype()));
  const bool want_dscale = ctx.output_wanted(1);
  const bool want_dbias = kind != LayerNormGradKind::kSimplified && ctx.output_wanted(2);

  MEMOPT_RETURN_IF_ERROR(ctx.AllocateOutput(0, x.dtype(), x.shape()));
  if (want_dscale) MEMOPT_RETURN_IF_ERROR(ctx.AllocateOutput(1, scale.dtype(), scale.shape()));
  if (want_dbias) MEMOPT_RETURN_IF_ERROR(ctx.AllocateOutput(2, scale.dtype(), scale.shape()));
  DeviceTensor scratch;
  if (const int64_t n = LayerNormGradScratch(v.rows, v.cols); (want_dscale || want_dbias) && n > 0) {
    MEMOPT_ASSIGN_OR_RETURN(scratch, DeviceTensor::Empty(ctx.pool, DataType::kFloat, {n}));
  }
  LayerNormGradArgs a;
  a.kind = kind;
  a.dy = dy.raw();
  a.x = x.raw();
  a.scale = scale.raw();
  a.bias = plan->bias_input >= 0 ? ctx.input(plan->bias_input).raw() : nullptr;
  a.mean = plan->mean_input >= 0 ? ctx.input(plan->mean_input).raw() : nullptr;
  a.inv_std = inv.raw();
  a.stats_double = inv.dtype() == DataType::kDouble;
  a.dx = ctx.outputs[0].raw();
  a.dscale = want_dscale ? ctx.outputs[1].raw() : nullptr;
  a.dbias = want_dbias ? ctx.outputs[2].raw() : nullptr;
  a.rows = v.rows;
  a.cols = v.cols;
  return Launched(ctx, LaunchLayerNormGrad(*ToElemType(x.dtype()), *ToElemType(scale.dtype()), a, scratch.data<float>(),
                                           ctx.stream()));
}

constexpr const char* kMs = "com.microsoft";

}  // namespace

MEMOPT_CUDA_OPS(norm, norm) {
  r.Register("", "LayerNormalization", [](CudaKernelContext& ctx) { return NormalizeLastDims(ctx, false, 2, 1, 2); });
  r.Register("", "SimplifiedLayerNormalization",
             [](CudaKernelContext& ctx) { return NormalizeLastDims(ctx, true, -1, -1, 1); });
  r.Register("", "RMSNormalization", [](CudaKernelContext& ctx) { return NormalizeLastDims(ctx, true, -1, -1, -1); });
  r.Register(kMs, "SkipLayerNormalization", [](CudaKernelContext& ctx) { return SkipNorm(ctx, false); });
  r.Register(kMs, "SkipSimplifiedLayerNormalization", [](CudaKernelContext& ctx) { return SkipNorm(ctx, true); });
  r.Register(kMs, "LayerNormalizationGrad", LayerNormGrad);
  r.Register(kMs, "SimplifiedLayerNormalizationGrad", LayerNormGrad);
  r.Register(kMs, "InvertibleLayerNormalizationGrad", LayerNormGrad);
}

}  // namespace memopt::cuda
