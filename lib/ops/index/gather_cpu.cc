// Indexing reads: Gather, GatherElements, GatherND, OneHot, NonZero, Compress, ReverseSequence.
#include <algorithm>

#include "exec/kernels/decode_inputs.h"
#include "exec/kernels/gather_plan.h"
#include "exec/kernels/kernel_util.h"
#include "exec/kernels/tensor_common.h"
#include "ir/op_registry.h"

namespace memopt::tensor_kernels {
namespace {

// Index value `idx` for an axis of size `dim`, negative counting from the end (ResolveIndex); an
// error naming the node when it is out of range.
Expected<int64_t> CheckedIndex(const KernelContext& ctx, int64_t idx, int64_t dim) {
  auto k = ResolveIndex(idx, dim);
  if (!k.ok()) return ctx.Error(k.status().message());
  return k;
}

Status GatherKernel(KernelContext& ctx) {
  const Tensor& data = ctx.input(0);
  MEMOPT_ASSIGN_OR_RETURN(std::vector<int64_t> indices, ReadIntInput(ctx, 1, "indices"));
  auto plan = DecodeGather(*ctx.node, data, ctx.input(1));
  if (!plan.ok()) return ctx.Error(plan.status().message());
  const int64_t dim = plan->dim;
  for (int64_t& i : indices) {
    MEMOPT_ASSIGN_OR_RETURN(i, CheckedIndex(ctx, i, dim));
  }
  const std::vector<int64_t>& shape = plan->shape;
  Tensor out = NewTensor(data.dtype(), shape);
  const int64_t outer = plan->outer, inner = plan->inner, n = plan->count;
  if (data.dtype() == DataType::kString || inner > 1) {
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t j = 0; j < n; ++j)
        CopyElements(data, (o * dim + indices[j]) * inner, out, (o * n + j) * inner, inner);
    }
  } else {
    MEMOPT_RETURN_IF_ERROR(DispatchBySize(data.dtype(), [&](auto tag) {
      using U = typename decltype(tag)::type;
      const U* s = data.data<U>();
      U* d = out.data<U>();
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t j = 0; j < n; ++j) d[o * n + j] = s[o * dim + indices[j]];
      }
    }));
  }
  ctx.outputs[0] = std::move(out);
  return Status::Ok();
}

Status GatherElementsKernel(KernelContext& ctx) {
  const Tensor& data = ctx.input(0);
  MEMOPT_ASSIGN_OR_RETURN(std::vector<int64_t> indices, ReadIntInput(ctx, 1, "indices"));
  const Tensor& ind = ctx.input(1);
  const int64_t r = data.rank();
  if (ind.rank() != r) return ctx.Error("indices " + ind.Describe() + " must have the rank of data " + data.Describe());
  MEMOPT_ASSIGN_OR_RETURN(int64_t axis, CheckedAxis(ctx, ctx.node->GetInt("axis", 0), r));
  for (int64_t d = 0; d < r; ++d) {
    if (d != axis && ind.dim(d) > data.dim(d)) {
      return ctx.Error("indices " + ind.Describe() + " exceed data " + data.Describe() + " on axis " +
                       std::to_string(d));
    }
  }
  const int64_t dim = data.dim(axis);
  for (int64_t& i : indices) {
    MEMOPT_ASSIGN_OR_RETURN(i, CheckedIndex(ctx, i, dim));
  }
  Tensor out = NewTensor(data.dtype(), ind.shape());
  std::vector<int64_t> data_strides = Strides(data.shape());
  const int64_t axis_stride = data_strides[axis];
  data_strides[axis] = 0;
  std::vector<std::vector<int64_t>> strides = {data_strides};
  if (data.dtype() == DataType::kString) {
    ForEachIndexed(ind.shape(), strides, [&](int64_t i, const int64_t* off) {
      out.strings()[i] = data.strings()[off[0] + indices[i] * axis_stride];
    });
  } else {
    MEMOPT_RETURN_IF_ERROR(DispatchBySize(data.dtype(), [&](auto tag) {
      using U = typename decltype(tag)::type;
      const U* s = data.data<U>();
      U* d = out.data<U>();
      ForEachIndexed(ind.shape(), strides,
                     [&](int64_t i, const int64_t* off) { d[i] = s[off[0] + indices[i] * axis_stride]; });
    }));
  }
  ctx.outputs[0] = std::move(out);
  return Status::Ok();
}

Status GatherNDKernel(KernelContext& ctx) {
  const Tensor& data = ctx.input(0);
  MEMOPT_ASSIGN_OR_RETURN(std::vector<int64_t> indices, ReadIntInput(ctx, 1, "indices"));
  const Tensor& ind = ctx.input(1);
  const int64_t b = ctx.node->GetInt("batch_dims", 0);
  if (ind.rank() < 1) return ctx.Error("indices must have rank >= 1, got " + ind.Describe());
  const int64_t k = ind.dim(ind.rank() - 1);
  if (b < 0 || b >= std::min(data.rank(), ind.rank()) || b + k > data.rank()) {
    return ctx.Error("batch_dims " + std::to_string(b) + " and index depth " + std::to_string(k) + " do not fit data " +
                     data.Describe() + " and indices " + ind.Describe());
  }
  for (int64_t d = 0; d < b; ++d) {
    if (data.dim(d) != ind.dim(d)) {
      return ctx.Error("batch dim " + std::to_string(d) + " differs between data " + data.Describe() + " and indices " +
                       ind.Describe());
    }
  }
  std::vector<int64_t> shape(ind.shape().begin(), ind.shape().end() - 1);
  shape.insert(shape.end(), data.shape().begin() + b + k, data.shape().end());
  Tensor out = NewTensor(data.dtype(), shape);
  const std::vector<int64_t> strides = Strides(data.shape());
  const int64_t slice = ProductOf(data.shape(), b + k, data.rank());
  const int64_t batches = ProductOf(data.shape(), 0, b);
  const int64_t batch_stride = ProductOf(data.shape(), b, data.rank());
  const int64_t tuples = ProductOf(ind.shape(), 0, ind.rank() - 1);
  const int64_t per_batch = batches > 0 ? tuples / batches : 0;
  for (int64_t t = 0; t < tuples; ++t) {
    const int64_t batch = per_batch > 0 ? t / per_batch : 0;
    int64_t off = batch * batch_stride;
    for (int64_t j = 0; j < k; ++j) {
      MEMOPT_ASSIGN_OR_RETURN(int64_t i, CheckedIndex(ctx, indices[t * k + j], data.dim(b + j)));
      off += i * strides[b + j];
    }
    CopyElements(data, off, out, t * slice, slice);
  }
  ctx.outputs[0] = std::move(out);
  return Status::Ok();
}

Status OneHotKernel(KernelContext& ctx) {
  const Tensor& ind = ctx.input(0);
  const Tensor& values = ctx.input(2);
  if (ctx.input(1).numel() != 1) return ctx.Error("depth must hold one value, got " + ctx.input(1).Describe());
  const int64_t depth = static_cast<int64_t>(ctx.input(1).GetAsDouble(0));
  if (depth <= 0) return ctx.Error("depth must be positive, got " + std::to_string(depth));
  if (values.numel() != 2) return ctx.Error("values must hold [off_value, on_value], got " + values.Describe());
  const int64_t out_rank = ind.rank() + 1;
  MEMOPT_ASSIGN_OR_RETURN(int64_t axis, CheckedAxis(ctx, ctx.node->GetInt("axis", -1), out_rank));
  std::vector<int64_t> shape = ind.shape();
  shape.insert(shape.begin() + axis, depth);
  Tensor out = NewTensor(values.dtype(), shape);
  FillWithElement(out, values, 0);
  const int64_t outer = ProductOf(ind.shape(), 0, axis);
  const int64_t inner = ProductOf(ind.shape(), axis, ind.rank());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      int64_t idx = static_cast<int64_t>(ind.GetAsDouble(o * inner + i));
      if (idx < 0) idx += depth;
      if (idx < 0 || idx >= depth) continue;
      CopyElements(values, 1, out, (o * depth + idx) * inner + i, 1);
    }
  }
  ctx.outputs[0] = std::move(out);
  return Status::Ok();
}

// Element i of t is non-zero (non-empty for strings).
bool IsNonZero(const Tensor& t, int64_t i) {
  if (t.dtype() == DataType::kString) return !t.strings()[i].empty();
  return t.GetAsDouble(i) != 0.0;
}

Status NonZeroKernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  std::vector<int64_t> hits;
  for (int64_t i = 0; i < x.numel(); ++i) {
    if (IsNonZero(x, i)) hits.push_back(i);
  }
  const int64_t r = x.rank(), n = static_cast<int64_t>(hits.size());
  Tensor out(DataType::kInt64, {r, n});
  int64_t* o = out.data<int64_t>();
  for (int64_t j = 0; j < n; ++j) {
    int64_t rem = hits[j];
    for (int64_t d = r - 1; d >= 0; --d) {
      o[d * n + j] = rem % x.dim(d);
      rem /= x.dim(d);
    }
  }
  ctx.outputs[0] = std::move(out);
  return Status::Ok();
}

Status CompressKernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& cond = ctx.input(1);
  if (cond.rank() != 1) return ctx.Error("condition must be 1-D, got " + cond.Describe());
  const bool has_axis = ctx.node->HasAttr("axis");
  Tensor src = has_axis ? x : ReshapeView(x, {x.numel()});
  int64_t axis = 0;
  if (has_axis) {
    MEMOPT_ASSIGN_OR_RETURN(axis, CheckedAxis(ctx, ctx.node->GetInt("axis", 0), x.rank()));
  }
  const int64_t dim = src.dim(axis);
  std::vector<int64_t> keep;
  for (int64_t i = 0; i < std::min(dim, cond.numel()); ++i) {
    if (cond.GetAsDouble(i) != 0.0) keep.push_back(i);
  }
  std::vector<int64_t> shape = src.shape();
  shape[axis] = static_cast<int64_t>(keep.size());
  Tensor out = NewTensor(x.dtype(), shape);
  const int64_t outer = ProductOf(src.shape(), 0, axis);
  const int64_t inner = ProductOf(src.shape(), axis + 1, src.rank());
  const int64_t n = static_cast<int64_t>(keep.size());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j = 0; j < n; ++j) CopyElements(src, (o * dim + keep[j]) * inner, out, (o * n + j) * inner, inner);
  }
  ctx.outputs[0] = std::move(out);
  return Status::Ok();
}

Status ReverseSequenceKernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  MEMOPT_ASSIGN_OR_RETURN(std::vector<int64_t> lens, ReadIntInput(ctx, 1, "sequence_lens"));
  if (x.rank() < 2) return ctx.Error("input must have rank >= 2, got " + x.Describe());
  MEMOPT_ASSIGN_OR_RETURN(int64_t batch_axis,
                          CheckedAxis(ctx, ctx.node->GetInt("batch_axis", 1), x.rank(), "batch_axis"));
  MEMOPT_ASSIGN_OR_RETURN(int64_t time_axis, CheckedAxis(ctx, ctx.node->GetInt("time_axis", 0), x.rank(), "time_axis"));
  if (batch_axis == time_axis) return ctx.Error("batch_axis and time_axis must differ");
  const int64_t batch = x.dim(batch_axis), time = x.dim(time_axis);
  if (static_cast<int64_t>(lens.size()) != batch) {
    return ctx.Error("sequence_lens has " + std::to_string(lens.size()) + " entries but the batch size is " +
                     std::to_string(batch));
  }
  // Index maps cannot express a per-batch reversal, so copy one [batch, time] position at a time.
  Tensor out = NewTensor(x.dtype(), x.shape());
  const std::vector<int64_t> strides = Strides(x.shape());
  std::vector<int64_t> rest_shape = x.shape(), rest_strides = strides;
  rest_shape[batch_axis] = rest_shape[time_axis] = 1;
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t len = std::clamp<int64_t>(lens[b], 0, time);
    for (int64_t t = 0; t < time; ++t) {
      const int64_t src_t = t < len ? len - 1 - t : t;
      StridedCopy(x, b * strides[batch_axis] + src_t * strides[time_axis], rest_strides, out,
                  b * strides[batch_axis] + t * strides[time_axis], rest_strides, rest_shape);
    }
  }
  ctx.outputs[0] = std::move(out);
  return Status::Ok();
}

}  // namespace

static void RegisterIndexKernels(OpRegistry& r) {
  r.SetCpuKernel("", "Gather", GatherKernel);
  r.SetCpuKernel("", "GatherElements", GatherElementsKernel);
  r.SetCpuKernel("", "GatherND", GatherNDKernel);
  r.SetCpuKernel("", "OneHot", OneHotKernel);
  r.SetCpuKernel("", "NonZero", NonZeroKernel);
  r.SetCpuKernel("", "Compress", CompressKernel);
  r.SetCpuKernel("", "ReverseSequence", ReverseSequenceKernel);
}

}  // namespace memopt::tensor_kernels

MEMOPT_OPS(index, gather_cpu) {
  memopt::tensor_kernels::RegisterIndexKernels(ops);
}
