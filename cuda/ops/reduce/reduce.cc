// Node-level wrappers of the reductions: ReduceSum (and com.microsoft ReduceSumTraining),
// ReduceMean, ReduceMax, ReduceMin, ReduceSumSquare, ReduceL2, ReduceLogSumExp, and the variadic
// Sum/Mean/Max/Min. Attributes, axes and output shapes follow the CPU kernels (lib/ops/reduce/
// reduce_cpu.cc, ops/elementwise/variadic_cpu.cc); float types only, accumulating in float.
#include <algorithm>
#include <string>
#include <vector>

#include "cuda_kernel.h"
#include "elem_type.h"
#include "exec/kernels/kernel_util.h"
#include "kernel_util.h"
#include "reduce_launch.h"

namespace memopt::cuda {

std::vector<ReducePass> PlanReducePasses(const std::vector<int64_t>& shape, const std::vector<bool>& reduce) {
  std::vector<int64_t> sizes;
  std::vector<bool> reduced;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;  // size-1 dims change nothing
    if (!sizes.empty() && reduced.back() == reduce[d]) {
      sizes.back() *= shape[d];
    } else {
      sizes.push_back(shape[d]);
      reduced.push_back(reduce[d]);
    }
  }
  std::vector<ReducePass> passes;
  while (true) {
    int64_t j = static_cast<int64_t>(sizes.size()) - 1;
    while (j >= 0 && !reduced[j]) --j;
    if (j < 0) break;
    ReducePass p;
    p.outer = memopt::ProductOf(sizes, 0, j);
    p.len = sizes[j];
    p.inner = memopt::ProductOf(sizes, j + 1, static_cast<int64_t>(sizes.size()));
    passes.push_back(p);
    // The result drops group j; its kept neighbours become one group.
    sizes.erase(sizes.begin() + j);
    reduced.erase(reduced.begin() + j);
    if (j > 0 && j < static_cast<int64_t>(sizes.size())) {
      sizes[j - 1] *= sizes[j];
      sizes.erase(sizes.begin() + j);
      reduced.erase(reduced.begin() + j);
    }
  }
  if (passes.empty()) passes.push_back(ReducePass{1, 1, memopt::ProductOf(shape, 0, static_cast<int64_t>(shape.size()))});
  return passes;
}

namespace {

/// The CPU's rule: the `axes` input when present, else the attribute; none means all axes,
/// unless noop_with_empty_axes.
Expected<std::vector<bool>> ReducedAxes(const CudaKernelContext& ctx, int64_t rank) {
  std::vector<int64_t> axes;
  if (ctx.has_input(1)) {
    const DeviceTensor& a = ctx.input(1);
    if (a.dtype() != DataType::kInt64 && a.dtype() != DataType::kInt32) {
      return ctx.Error("axes must be int64, got " + a.Describe());
    }
    MEMOPT_ASSIGN_OR_RETURN(axes, a.ToInt64Vector());
  } else {
    axes = ctx.node->GetInts("axes");
  }
  if (axes.empty()) {
    const bool noop = ctx.node->GetInt("noop_with_empty_axes", 0) != 0;
    return std::vector<bool>(static_cast<size_t>(rank), !noop);
  }
  auto norm = memopt::NormalizeAxes(axes, rank);
  if (!norm) {
    std::string list;
    for (int64_t a : axes) list += (list.empty() ? "" : ", ") + std::to_string(a);
    return ctx.Error("axes [" + list + "] are out of range or repeated for rank " + std::to_string(rank));
  }
  std::vector<bool> reduce(static_cast<size_t>(rank), false);
  for (int64_t a : *norm) reduce[static_cast<size_t>(a)] = true;
  return reduce;
}

template <ReduceKind kKind>
Status ReduceKernel(CudaKernelContext& ctx) {
  MEMOPT_RETURN_IF_ERROR(RequireInput(ctx, 0, "data"));
  const DeviceTensor& x = ctx.input(0);
  MEMOPT_ASSIGN_OR_RETURN(std::vector<bool> reduce, ReducedAxes(ctx, x.rank()));
  if (!IsGpuFloat(x.dtype())) return ctx.UnsupportedType(x.dtype());
  const bool keepdims = ctx.node->GetInt("keepdims", 1) != 0;
  std::vector<int64_t> out_shape;
  int64_t count = 1;  // input elements per output element (Mean's divisor)
  for (int64_t d = 0; d < x.rank(); ++d) {
    if (reduce[static_cast<size_t>(d)]) {
      count *= x.dim(d);
      if (keepdims) out_shape.push_back(1);
    } else {
      out_shape.push_back(x.dim(d));
    }
  }
  MEMOPT_RETURN_IF_ERROR(ctx.AllocateOutput(0, x.dtype(), out_shape));
  DeviceTensor& y = ctx.outputs[0];
  if (y.numel() == 0) return Status::Ok();
  // Reducing over an empty dim: every output is the finished empty reduction (0, NaN, -inf...).
  const std::vector<ReducePass> passes = x.numel() == 0 ? std::vector<ReducePass>{ReducePass{y.numel(), 0, 1}}
                                                        : PlanReducePasses(x.shape(), reduce);
  const ElemType t = *ToElemType(x.dtype());
  const void* in = x.raw();
  ElemType in_type = t;
  DeviceTensor prev;  // the previous pass's float results, read by the current pass
  for (size_t k = 0; k < passes.size(); ++k) {
    const ReducePass& p = passes[k];
    const bool last = k + 1 == passes.size();
    DeviceTensor result;
    if (!last) {
      MEMOPT_ASSIGN_OR_RETURN(result, DeviceTensor::Empty(ctx.pool, DataType::kFloat, {p.outer * p.inner}));
    }
    DeviceTensor scratch;
    if (const int64_t n = ReducePassScratch(p); n > 0) {
      MEMOPT_ASSIGN_OR_RETURN(scratch, DeviceTensor::Empty(ctx.pool, DataType::kFloat, {n}));
    }
    // Blocks released below return to the pool stream-ordered: later kernels reuse them safely.
    MEMOPT_RETURN_IF_ERROR(Launched(
        ctx, LaunchReducePass(kKind, in_type, last ? t : ElemType::kF32, in, last ? y.raw() : result.raw(), p, k == 0,
                              last, count, scratch.data<float>(), ctx.stream())));
    prev = std::move(result);
    in = prev.raw();
    in_type = ElemType::kF32;
  }
  return Status::Ok();
}

/// Sum/Mean/Max/Min over any number of inputs with numpy broadcasting, folded in input order.
Status VariadicKernel(CudaKernelContext& ctx, VariadicOp op, bool mean) {
  const int n = ctx.num_inputs();
  if (n < 1) return ctx.Error("needs at least one input");
  std::vector<int64_t> shape;
  for (int i = 0; i < n; ++i) {
    MEMOPT_RETURN_IF_ERROR(RequireFloat(ctx, i, ("#" + std::to_string(i)).c_str()));
    const DeviceTensor& in = ctx.input(i);
    if (in.dtype() != ctx.input(0).dtype()) {
      return ctx.Error("input " + std::to_string(i) + " has type " + DataTypeName(in.dtype()) + ", input 0 has " +
                       DataTypeName(ctx.input(0).dtype()));
    }
    if (i == 0) {
      shape = in.shape();
      continue;
    }
    auto b = BroadcastShapes(shape, in.shape());
    if (!b.ok()) return ctx.Error(b.status().message());
    shape = *b;
  }
  const DeviceTensor& x0 = ctx.input(0);
  MEMOPT_RETURN_IF_ERROR(ctx.AllocateOutput(0, x0.dtype(), shape));
  DeviceTensor& y = ctx.outputs[0];
  if (y.numel() == 0) return Status::Ok();
  // Input strides right-aligned to the output (0 where broadcast), size-1 output dims dropped,
  // adjacent dims merged where every input is contiguous across them.
  std::vector<std::vector<int64_t>> full(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) full[i] = memopt::BroadcastStrides(ctx.input(i).shape(), shape);
  std::vector<int64_t> dims;
  std::vector<std::vector<int64_t>> strides(static_cast<size_t>(n));
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    bool merge = !dims.empty();
    for (int i = 0; merge && i < n; ++i) merge = strides[i].back() == full[i][d] * shape[d];
    if (merge) {
      dims.back() *= shape[d];
      for (int i = 0; i < n; ++i) strides[i].back() = full[i][d];
    } else {
      dims.push_back(shape[d]);
      for (int i = 0; i < n; ++i) strides[i].push_back(full[i][d]);
    }
  }
  if (dims.size() > static_cast<size_t>(kMaxRank)) {
    return Unsupported("node " + ctx.node->Describe() + ": more than " + std::to_string(kMaxRank) +
                       " broadcast dims on the GPU");
  }
  const ElemType t = *ToElemType(x0.dtype());
  for (int begin = 0; begin < n; begin += kMaxVariadicInputs) {
    VariadicArgs a;
    a.rank = static_cast<int>(dims.size());
    for (int d = 0; d < a.rank; ++d) a.dims[d] = dims[d];
    a.count = std::min(kMaxVariadicInputs, n - begin);
    for (int k = 0; k < a.count; ++k) {
      a.inputs[k] = ctx.input(begin + k).raw();
      for (int d = 0; d < a.rank; ++d) a.strides[k][d] = strides[begin + k][d];
    }
    const bool last = begin + kMaxVariadicInputs >= n;
    const float divisor = mean && last && n > 1 ? static_cast<float>(n) : 0.0f;
    MEMOPT_RETURN_IF_ERROR(
        Launched(ctx, LaunchVariadic(op, t, a, begin > 0, divisor, y.raw(), y.numel(), ctx.stream())));
  }
  return Status::Ok();
}

}  // namespace

MEMOPT_CUDA_OPS(reduce, reduce) {
  r.Register("", "ReduceSum", ReduceKernel<ReduceKind::kSum>);
  r.Register("com.microsoft", "ReduceSumTraining", ReduceKernel<ReduceKind::kSum>);
  r.Register("", "ReduceMean", ReduceKernel<ReduceKind::kMean>);
  r.Register("", "ReduceMax", ReduceKernel<ReduceKind::kMax>);
  r.Register("", "ReduceMin", ReduceKernel<ReduceKind::kMin>);
  r.Register("", "ReduceSumSquare", ReduceKernel<ReduceKind::kSumSquare>);
  r.Register("", "ReduceL2", ReduceKernel<ReduceKind::kL2>);
  r.Register("", "ReduceLogSumExp", ReduceKernel<ReduceKind::kLogSumExp>);
  r.Register("", "Sum", [](CudaKernelContext& ctx) { return VariadicKernel(ctx, VariadicOp::kSum, false); });
  r.Register("", "Mean", [](CudaKernelContext& ctx) { return VariadicKernel(ctx, VariadicOp::kSum, true); });
  r.Register("", "Max", [](CudaKernelContext& ctx) { return VariadicKernel(ctx, VariadicOp::kMax, false); });
  r.Register("", "Min", [](CudaKernelContext& ctx) { return VariadicKernel(ctx, VariadicOp::kMin, false); });
}

}  // namespace memopt::cuda
