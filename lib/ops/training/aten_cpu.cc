// org.pytorch.aten::ATen, the op ORTModule emits for PyTorch functions ONNX has no op for. The
// `operator` attribute names the aten function; the executor runs the ones found in exported
// transformer training graphs:
//   embedding(weight, indices, padding_idx, scale_grad_by_freq, sparse) = weight[indices]
//   embedding_backward(grad, indices, num_weights, padding_idx, scale_grad_by_freq, sparse):
//     dW = zeros([num_weights, D]); dW[indices[i]] += grad[i] (1 / count(indices[i]) when
//     scale_grad_by_freq), rows equal to padding_idx (>= 0) get no gradient.
// Any other operator is reported by CheckSupported before a run starts.
#include <cstring>
#include <algorithm>

#include "exec/kernel.h"
#include "exec/kernels/scatter_add_rows.h"
#include "exec/kernels/training_util.h"
#include "ir/op_registry.h"

namespace memopt {

namespace {

using training::DispatchCompute;
using training::ReadIndices;

std::string AtenOperator(const Node& node) { return node.GetString("operator", ""); }

/// Optional int64/bool scalar input `i`; `def` when omitted.
int64_t ScalarInput(const KernelContext& ctx, int i, int64_t def) {
  if (!ctx.has_input(i) || ctx.input(i).numel() == 0) return def;
  return static_cast<int64_t>(ctx.input(i).GetAsDouble(0));
}

Status Embedding(KernelContext& ctx) {
  if (!ctx.has_input(0) || !ctx.has_input(1)) return ctx.Error("embedding needs weight and indices");
  const Tensor& weight = ctx.input(0);
  if (weight.rank() != 2) return ctx.Error("embedding weight must be 2-D, got " + weight.Describe());
  const int64_t rows = weight.dim(0), dim = weight.dim(1);
  const std::vector<int64_t> idx = ReadIndices(ctx.input(1));
  std::vector<int64_t> shape = ctx.input(1).shape();
  shape.push_back(dim);
  ctx.outputs[0] = Tensor(weight.dtype(), shape);
  const int64_t row_bytes = dim * ElemByteSize(weight.dtype());
  const auto* src = static_cast<const char*>(weight.raw());
  auto* dst = static_cast<char*>(ctx.outputs[0].raw());
  for (size_t i = 0; i < idx.size(); ++i) {
    if (idx[i] < 0 || idx[i] >= rows) {
      return ctx.Error("embedding index " + std::to_string(idx[i]) + " is outside [0, " + std::to_string(rows) + ")");
    }
    std::memcpy(dst + static_cast<int64_t>(i) * row_bytes, src + idx[i] * row_bytes, static_cast<size_t>(row_bytes));
  }
  return Status::Ok();
}

Status EmbeddingBackward(KernelContext& ctx) {
  if (!ctx.has_input(0) || !ctx.has_input(1) || !ctx.has_input(2)) {
    return ctx.Error("embedding_backward needs grad, indices and num_weights");
  }
  const Tensor& grad = ctx.input(0);
  const std::vector<int64_t> idx = ReadIndices(ctx.input(1));
  const int64_t rows = ScalarInput(ctx, 2, -1);
  const int64_t padding_idx = ScalarInput(ctx, 3, -1);
  const bool scale_by_freq = ScalarInput(ctx, 4, 0) != 0;
  if (rows < 0) return ctx.Error("num_weights must be a non-negative scalar");
  const int64_t n = static_cast<int64_t>(idx.size());
  if (grad.rank() < 1 || (n == 0 ? grad.numel() != 0 : grad.numel() % n != 0)) {
    return ctx.Error("grad " + grad.Describe() + " does not hold one row per index (" + std::to_string(n) + ")");
  }
  const int64_t dim = grad.dim(grad.rank() - 1);
  if (n * dim != grad.numel()) {
    return ctx.Error("grad " + grad.Describe() + " does not hold one row per index (" + std::to_string(n) + ")");
  }
  for (int64_t k : idx) {
    if (k < 0 || k >= rows) {
      return ctx.Error("embedding index " + std::to_string(k) + " is outside [0, " + std::to_string(rows) + ")");
    }
  }
  // By weight row, in index order, 16-bit rows in float a row at a time (scatter_add_rows.h).
  ctx.outputs[0] = Tensor(grad.dtype(), {rows, dim});  // rows no index names stay zero
  return DispatchCompute(ctx, grad.dtype(), [&]<typename C>() -> Status {
    ScatterAddRows<C>(grad, idx, 1, rows, dim, ctx.outputs[0], padding_idx, [&](int64_t, int64_t count) {
      return scale_by_freq ? C(1) / static_cast<C>(count) : C(1);
    });
    return Status::Ok();
  });
}

Status AtenKernel(KernelContext& ctx) {
  const std::string op = AtenOperator(*ctx.node);
  if (op == "embedding") return Embedding(ctx);
  if (op == "embedding_backward") return EmbeddingBackward(ctx);
  return ctx.Error("aten operator '" + op + "' is not supported by the CPU executor");
}

std::string AtenNodeCheck(const Node& node) {
  const std::string op = AtenOperator(node);
  if (op == "embedding" || op == "embedding_backward") return {};
  return "operator '" + op + "'";
}

}  // namespace

static void RegisterAtenKernels(OpRegistry& r) {
  KernelInfo aten(AtenKernel);
  aten.node_check = AtenNodeCheck;
  r.SetCpuKernel("org.pytorch.aten", "ATen", std::move(aten));
}

}  // namespace memopt

MEMOPT_OPS(training, aten_cpu) {
  memopt::RegisterAtenKernels(ops);
}
