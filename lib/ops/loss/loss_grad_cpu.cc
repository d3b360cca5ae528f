// Cross-entropy loss gradients (ort_training_ops.md 3.24, 3.25):
//   SoftmaxCrossEntropyLossInternalGrad(dY, log_prob, label, weight?, ignore_index?, bias?)
//   SoftmaxCrossEntropyLossGrad(dY, log_prob, label, weight?)   (ignore_index as an attribute)
// log_prob is [N, C] or [N, C, D1..Dk], label [N] or [N, D1..Dk]. With w = 0 for ignored labels,
// else weight[label] (or 1), and W = sum(w):
//   d_loss = dY*w/W (mean), dY*w (sum, dY scalar), dY[n,d]*w (none)
//   d_logits[n,c,d] = d_loss[n,d] * (exp(log_prob[n,c,d]) - [c == label[n,d]]) (+ bias)
// When every label is ignored under "mean" (W = 0) the gradient is 0 (torch does the same).
#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>
#include <vector>

#include "exec/kernels/kernel_util.h"
#include "exec/kernels/training_util.h"
#include "exec/math/vector_math.h"
#include "ir/op_registry.h"

namespace memopt::training {
namespace {

Status SceLossGradImpl(KernelContext& ctx, bool internal) {
  MEMOPT_RETURN_IF_ERROR(RequireFloatInput(ctx, 0, "dY"));
  MEMOPT_RETURN_IF_ERROR(RequireFloatInput(ctx, 1, "log_prob"));
  MEMOPT_RETURN_IF_ERROR(RequireInput(ctx, 2, "label"));
  const Tensor& dy = ctx.input(0);
  const Tensor& lp = ctx.input(1);
  const Tensor& label = ctx.input(2);
  if (label.dtype() != DataType::kInt32 && label.dtype() != DataType::kInt64) {
    return ctx.Error("label " + label.Describe() + " must be int32 or int64");
  }
  if (lp.rank() < 2) return ctx.Error("log_prob " + lp.Describe() + " must have rank >= 2 ([N, C, ...])");
  const int64_t n = lp.dim(0), classes = lp.dim(1), inner = ShapeProduct(lp.shape(), 2, lp.rank());
  if (label.numel() != n * inner || label.rank() != lp.rank() - 1) {
    return ctx.Error("label " + label.Describe() + " does not match log_prob " + lp.Describe() +
                     " (expected [N, D1..Dk] for log_prob [N, C, D1..Dk])");
  }
  const bool has_weight = ctx.has_input(3);
  if (has_weight) {
    MEMOPT_RETURN_IF_ERROR(RequireFloatInput(ctx, 3, "weight"));
    if (ctx.input(3).numel() != classes) {
      return ctx.Error("weight " + ctx.input(3).Describe() + " must have C = " + std::to_string(classes) + " elements");
    }
  }
  bool has_ignore = false;
  int64_t ignore_index = 0;
  if (internal && ctx.has_input(4) && ctx.input(4).numel() > 0) {
    has_ignore = true;
    ignore_index = static_cast<int64_t>(ScalarAsDouble(ctx.input(4)));
  } else if (ctx.node->HasAttr("ignore_index")) {
    has_ignore = true;
    ignore_index = ctx.node->GetInt("ignore_index", 0);
  }
  const bool has_bias = internal && ctx.has_input(5);
  if (has_bias) {
    MEMOPT_RETURN_IF_ERROR(RequireFloatInput(ctx, 5, "bias"));
    if (ctx.input(5).numel() != lp.numel()) {
      return ctx.Error("bias " + ctx.input(5).Describe() + " must have the shape of log_prob " + lp.Describe());
    }
  }
  const std::string reduction = ctx.node->GetString("reduction", "mean");
  if (reduction != "mean" && reduction != "sum" && reduction != "none") {
    return ctx.Error("unknown reduction '" + reduction + "' (expected mean, sum or none)");
  }
  if (reduction == "none" ? dy.numel() != label.numel() : dy.numel() != 1) {
    return ctx.Error("dY " + dy.Describe() + " does not match reduction '" + reduction + "' for label " +
                     label.Describe());
  }
  DataType out_type = lp.dtype();
  if (ctx.node->HasAttr("output_type")) {
    out_type = static_cast<DataType>(ctx.node->GetInt("output_type", 0));
    if (!IsFloatType(out_type)) return ctx.Error("output_type " + DataTypeName(out_type) + " is not a float type");
  }

  const std::vector<int64_t> labels = ReadIndices(label);
  std::vector<double> w(labels.size());
  double wsum = 0;
  {
    std::vector<double> weight;
    if (has_weight) {
      weight.resize(static_cast<size_t>(classes));
      ConvertRange(ctx.input(3), 0, classes, weight.data());  // C elements (checked above)
    }
    for (size_t i = 0; i < labels.size(); ++i) {
      const int64_t y = labels[i];
      if (has_ignore && y == ignore_index) {
        w[i] = 0;
        continue;
      }
      if (y < 0 || y >= classes) {
        return ctx.Error("label value " + std::to_string(y) + " at position " + std::to_string(i) +
                         " is outside [0, " + std::to_string(classes) + ")");
      }
      w[i] = has_weight ? weight[static_cast<size_t>(y)] : 1.0;
      wsum += w[i];
    }
  }
  ctx.outputs[0] = Tensor::Uninitialized(out_type, lp.shape());  // every element is written
  const DataType compute = (out_type == DataType::kDouble || lp.dtype() == DataType::kDouble) ? DataType::kDouble
                                                                                                : DataType::kFloat;
  // log_prob (and bias) are read, and d_logits written, one class row (strided: one block of
  // positions) at a time, so float16 logits are not copied to float whole.
  Tensor& out = ctx.outputs[0];
  return DispatchCompute(ctx, compute, [&]<typename C>() -> Status {
    InView<C> g(dy);
    const Tensor* bias = has_bias ? &ctx.input(5) : nullptr;
    const int reduce = reduction == "none" ? 0 : (reduction == "sum" ? 1 : 2);
    const int64_t span = BlockPositions(classes, inner);
    const bool in_place = inner == 1 && StoredAs<C>(out);
    ParallelFor(n, 4 * classes * inner, [&](int64_t begin, int64_t end) {
      const size_t block = static_cast<size_t>(classes * span);
      std::vector<C> logp(block), staged(in_place ? 0 : block), bias_block(bias ? block : 0);
      for (int64_t b = begin; b < end; ++b) {
        for (int64_t j0 = 0; j0 < inner; j0 += span) {
          const int64_t len = std::min(span, inner - j0);
          const int64_t base = b * classes * inner + j0;
          const C* lp_block = logp.data();
          if (inner == 1) {
            lp_block = ReadRange<C>(lp, base, classes, logp.data());
          } else {
            ConvertBlock(lp, base, classes, inner, len, logp.data());
          }
          if (bias) ConvertBlock(*bias, base, classes, inner, len, bias_block.data());
          C* o = in_place ? out.data<C>() + base : staged.data();
          const bool exp_done = std::is_same_v<C, float> && inner == 1;
          if constexpr (std::is_same_v<C, float>) {
            // Contiguous class rows: the exponentials first, vectorised (exec/math/vector_math.h).
            if (inner == 1) math::ExpArray(lp_block, o, classes);
          }
          for (int64_t jj = 0; jj < len; ++jj) {
            const size_t li = static_cast<size_t>(b * inner + j0 + jj);
            double dl;
            if (reduce == 0) {
              dl = static_cast<double>(g[static_cast<int64_t>(li)]) * w[li];
            } else if (reduce == 1) {
              dl = static_cast<double>(g[0]) * w[li];
            } else {
              dl = wsum == 0 ? 0.0 : static_cast<double>(g[0]) * w[li] / wsum;
            }
            const C dlc = static_cast<C>(dl);
            for (int64_t c = 0; c < classes; ++c) {
              const int64_t k = c * len + jj;
              const C e = exp_done ? o[k] : std::exp(lp_block[k]);
              C v = dlc * (e - (c == labels[li] ? C(1) : C(0)));
              if (bias) v += bias_block[static_cast<size_t>(k)];
              o[k] = v;
            }
          }
          if (!in_place) {
            for (int64_t c = 0; c < classes; ++c) StoreRange(o + c * len, len, out, base + c * inner);
          }
        }
      }
    });
    return Status::Ok();
  });
}

Status SceLossInternalGradKernel(KernelContext& ctx) { return SceLossGradImpl(ctx, true); }
Status SceLossGradKernel(KernelContext& ctx) { return SceLossGradImpl(ctx, false); }

}  // namespace

static void RegisterLossGradKernels(OpRegistry& r) {
  const auto types = FloatTypes();
  r.SetCpuKernel(kMsDomain, "SoftmaxCrossEntropyLossInternalGrad", SceLossInternalGradKernel, types);
  r.SetCpuKernel(kMsDomain, "SoftmaxCrossEntropyLossGrad", SceLossGradKernel, types);
}

}  // namespace memopt::training

MEMOPT_OPS(loss, loss_grad_cpu) {
  memopt::training::RegisterLossGradKernels(ops);
}
