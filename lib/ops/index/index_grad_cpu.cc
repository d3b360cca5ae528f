// Gradients of indexing / broadcasting ops (ort_training_ops.md 3.16-3.21): DivGrad,
// BroadcastGradientArgs, GatherGrad, GatherElementsGrad, GatherNDGrad, SliceGrad.
// The scatter-add kernels (Gather*Grad) accumulate duplicated indices.
#include <algorithm>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "exec/kernels/decode_inputs.h"
#include "exec/kernels/gather_plan.h"
#include "exec/kernels/scatter_add_rows.h"
#include "exec/kernels/kernel_util.h"
#include "exec/kernels/slice_region.h"
#include "exec/kernels/tensor_common.h"
#include "exec/kernels/training_util.h"
#include "ir/op_registry.h"

namespace memopt::training {
namespace {

/// The int64 shape held by input i (a 1-D shape tensor), checked non-negative.
Expected<std::vector<int64_t>> ReadShapeInput(const KernelContext& ctx, int i, const char* what) {
  MEMOPT_RETURN_IF_ERROR(RequireInput(ctx, i, what));
  const Tensor& t = ctx.input(i);
  if (t.dtype() != DataType::kInt64 && t.dtype() != DataType::kInt32) {
    return ctx.Error(std::string(what) + " " + t.Describe() + " must be an int64 shape tensor");
  }
  std::vector<int64_t> shape = ReadIndices(t);
  for (int64_t d : shape) {
    if (d < 0) return ctx.Error(std::string(what) + " has a negative dim " + std::to_string(d));
  }
  return shape;
}

/// Index `j` along a dim of size `dim`, negative counting from the end; an error when out of range.
Expected<int64_t> WrapIndex(const KernelContext& ctx, int64_t j, int64_t dim) {
  const int64_t k = j < 0 ? j + dim : j;
  if (k < 0 || k >= dim) {
    return ctx.Error("index " + std::to_string(j) + " is out of range for a dim of size " + std::to_string(dim));
  }
  return k;
}

// DivGrad(dY, A, B) -> dA = reduce(dY / B), dB = reduce(-dY * A / B^2), reduced to A's and B's shapes.
Status DivGradKernel(KernelContext& ctx) {
  MEMOPT_RETURN_IF_ERROR(RequireFloatInput(ctx, 0, "dY"));
  MEMOPT_RETURN_IF_ERROR(RequireFloatInput(ctx, 1, "A"));
  MEMOPT_RETURN_IF_ERROR(RequireFloatInput(ctx, 2, "B"));
  const Tensor& dy = ctx.input(0);
  const Tensor& a = ctx.input(1);
  const Tensor& b = ctx.input(2);
  auto out_shape = BroadcastShape(a.shape(), b.shape());
  if (!out_shape || *out_shape != dy.shape()) {
    return ctx.Error("dY " + dy.Describe() + " is not the broadcast of A " + a.Describe() + " and B " + b.Describe());
  }
  const bool want_a = ctx.output_wanted(0), want_b = ctx.output_wanted(1);
  if (want_a) ctx.outputs[0] = Tensor(a.dtype(), a.shape());
  if (want_b) ctx.outputs[1] = Tensor(b.dtype(), b.shape());
  return DispatchCompute(ctx, dy.dtype(), [&]<typename C>() -> Status {
    // dY, A and B walked in dY's order, a chunk at a time for 16-bit tensors. An operand of dY's
    // shape gets one term per element, written as it comes (0 + t, as the sum would be); a
    // broadcast one sums its terms in double, in dY's order.
    ChunkedReader<C> g(dy), av(a), bv(b);
    const bool a_full = a.shape() == dy.shape(), b_full = b.shape() == dy.shape();
    std::vector<double> da(want_a && !a_full ? static_cast<size_t>(a.numel()) : 0),
        db(want_b && !b_full ? static_cast<size_t>(b.numel()) : 0);
    std::optional<ChunkedWriter<C>> da_out, db_out;
    if (want_a && a_full) da_out.emplace(ctx.outputs[0]);
    if (want_b && b_full) db_out.emplace(ctx.outputs[1]);
    const std::vector<std::vector<int64_t>> strides = {BroadcastStrides(a.shape(), dy.shape()),
                                                       BroadcastStrides(b.shape(), dy.shape())};
    ForEachIndexed(dy.shape(), strides, [&](int64_t i, const int64_t* off) {
      const double gi = g[i], ai = av[off[0]], bi = bv[off[1]];
      if (want_a) {
        const double t = gi / bi;
        if (a_full) {
          (*da_out)[i] = static_cast<C>(0.0 + t);
        } else {
          da[static_cast<size_t>(off[0])] += t;
        }
      }
      if (want_b) {
        const double t = gi * ai / (bi * bi);
        if (b_full) {
          (*db_out)[i] = static_cast<C>(0.0 - t);
        } else {
          db[static_cast<size_t>(off[1])] -= t;
        }
      }
    });
    if (want_a && !a_full) StoreFromCompute(da.data(), ctx.outputs[0]);
    if (want_b && !b_full) StoreFromCompute(db.data(), ctx.outputs[1]);
    return Status::Ok();
  });
}

// BroadcastGradientArgs(a_shape, b_shape) -> (a_axes, b_axes): the axes (in broadcast coordinates,
// listed last to first) that each operand's gradient must be summed over.
Status BroadcastGradientArgsKernel(KernelContext& ctx) {
  MEMOPT_ASSIGN_OR_RETURN(std::vector<int64_t> a, ReadShapeInput(ctx, 0, "a_shape"));
  MEMOPT_ASSIGN_OR_RETURN(std::vector<int64_t> b, ReadShapeInput(ctx, 1, "b_shape"));
  const int64_t ra = static_cast<int64_t>(a.size()), rb = static_cast<int64_t>(b.size());
  const int64_t r = std::max(ra, rb);
  std::vector<int64_t> a_axes, b_axes;
  for (int64_t k = r - 1; k >= 0; --k) {
    const int64_t ia = k - (r - ra), ib = k - (r - rb);
    if (ia < 0) {
      a_axes.push_back(k);
      continue;
    }
    if (ib < 0) {
      b_axes.push_back(k);
      continue;
    }
    const int64_t da = a[static_cast<size_t>(ia)], db = b[static_cast<size_t>(ib)];
    if (da == db) continue;
    if (da == 1) {
      a_axes.push_back(k);
    } else if (db == 1) {
      b_axes.push_back(k);
    } else {
      return ctx.Error("shapes " + ShapeToString(a) + " and " + ShapeToString(b) + " do not broadcast (dim " +
                       std::to_string(k) + ": " + std::to_string(da) + " vs " + std::to_string(db) + ")");
    }
  }
  for (int i = 0; i < 2; ++i) {
    if (!ctx.output_wanted(i)) continue;
    const std::vector<int64_t>& axes = i == 0 ? a_axes : b_axes;
    ctx.outputs[i] = Tensor(DataType::kInt64, {static_cast<int64_t>(axes.size())});
    std::copy(axes.begin(), axes.end(), ctx.outputs[i].data<int64_t>());
  }
  return Status::Ok();
}

// GatherGrad(shape, indices, dY) attr axis: dX = zeros(shape); dX[pre, indices[q], post] += dY[pre, q, post].
Status GatherGradKernel(KernelContext& ctx) {
  MEMOPT_ASSIGN_OR_RETURN(std::vector<int64_t> shape, ReadShapeInput(ctx, 0, "shape"));
  MEMOPT_RETURN_IF_ERROR(RequireInput(ctx, 1, "indices"));
  MEMOPT_RETURN_IF_ERROR(RequireFloatInput(ctx, 2, "dY"));
  const Tensor& dy = ctx.input(2);
  auto plan = DecodeGatherGrad(*ctx.node, shape, ctx.input(1), dy);
  if (!plan.ok()) return ctx.Error(plan.status().message());
  const std::vector<int64_t> idx = ReadIndices(ctx.input(1));
  const int64_t pre = plan->outer, dim = plan->dim, post = plan->inner;
  std::vector<int64_t> wrapped(idx.size());
  for (size_t i = 0; i < idx.size(); ++i) {
    auto k = ResolveIndex(idx[i], dim);
    if (!k.ok()) return ctx.Error(k.status().message());
    wrapped[i] = *k;
  }
  // By output row, in q order, 16-bit rows in float a row at a time (scatter_add_rows.h).
  ctx.outputs[0] = Tensor(dy.dtype(), shape);  // rows no index names stay zero
  return DispatchCompute(ctx, dy.dtype(), [&]<typename C>() -> Status {
    ScatterAddRows<C>(dy, wrapped, pre, dim, post, ctx.outputs[0], -1, [](int64_t, int64_t) { return C(1); });
    return Status::Ok();
  });
}

// GatherElementsGrad(dY, shape, indices) attr axis: dX[p with p[axis] = indices[p]] += dY[p].
Status GatherElementsGradKernel(KernelContext& ctx) {
  MEMOPT_RETURN_IF_ERROR(RequireFloatInput(ctx, 0, "dY"));
  MEMOPT_ASSIGN_OR_RETURN(std::vector<int64_t> shape, ReadShapeInput(ctx, 1, "shape"));
  MEMOPT_RETURN_IF_ERROR(RequireInput(ctx, 2, "indices"));
  const Tensor& dy = ctx.input(0);
  const Tensor& indices = ctx.input(2);
  const int64_t rank = static_cast<int64_t>(shape.size());
  if (rank == 0 || indices.rank() != rank || dy.numel() != indices.numel()) {
    return ctx.Error("indices " + indices.Describe() + " and dY " + dy.Describe() +
                     " must have the same size and the rank of shape " + ShapeToString(shape));
  }
  MEMOPT_ASSIGN_OR_RETURN(int64_t axis, AxisOrError(ctx, ctx.node->GetInt("axis", 0), rank));
  for (int64_t d = 0; d < rank; ++d) {
    if (d != axis && indices.dim(d) > shape[static_cast<size_t>(d)]) {
      return ctx.Error("indices " + indices.Describe() + " exceed shape " + ShapeToString(shape) + " at dim " +
                       std::to_string(d));
    }
  }
  const std::vector<int64_t> idx = ReadIndices(indices);
  const std::vector<int64_t> out_strides = Strides(shape);
  ctx.outputs[0] = Tensor(dy.dtype(), shape);
  // The target of every dY element first (a bad index fails before any write).
  std::vector<int64_t> target(static_cast<size_t>(indices.numel()));
  std::vector<int64_t> pos(static_cast<size_t>(rank), 0);
  for (int64_t i = 0; i < indices.numel(); ++i) {
    int64_t off = 0;
    for (int64_t d = 0; d < rank; ++d) {
      int64_t c = pos[static_cast<size_t>(d)];
      if (d == axis) {
        MEMOPT_ASSIGN_OR_RETURN(c, WrapIndex(ctx, idx[static_cast<size_t>(i)], shape[static_cast<size_t>(d)]));
      }
      off += c * out_strides[static_cast<size_t>(d)];
    }
    target[static_cast<size_t>(i)] = off;
    for (int64_t d = rank - 1; d >= 0; --d) {  // advance the multi-index over indices' shape
      if (++pos[static_cast<size_t>(d)] < indices.dim(d)) break;
      pos[static_cast<size_t>(d)] = 0;
    }
  }
  return DispatchCompute(ctx, dy.dtype(), [&]<typename C>() -> Status {
    InView<C> g(dy);  // as large as the indices
    Tensor& dx = ctx.outputs[0];
    if (StoredAs<C>(dx)) {  // added in place, in dY's order
      C* out = dx.data<C>();
      for (size_t i = 0; i < target.size(); ++i) out[target[i]] += g[static_cast<int64_t>(i)];
      return Status::Ok();
    }
    // 16-bit dX: the sources grouped by target (in dY's order within a target), each target's sum
    // in C rounded into dX once, so dX is never held as C whole.
    std::vector<size_t> order(target.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](size_t l, size_t r) { return target[l] < target[r]; });
    for (size_t k = 0; k < order.size();) {
      const int64_t off = target[order[k]];
      C sum = 0;
      for (; k < order.size() && target[order[k]] == off; ++k) sum += g[static_cast<int64_t>(order[k])];
      StoreRange(&sum, 1, dx, off);
    }
    return Status::Ok();
  });
}

// GatherNDGrad(shape, indices, update) attr batch_dims: scatter-add of the update slices.
Status GatherNDGradKernel(KernelContext& ctx) {
  MEMOPT_ASSIGN_OR_RETURN(std::vector<int64_t> shape, ReadShapeInput(ctx, 0, "shape"));
  MEMOPT_RETURN_IF_ERROR(RequireInput(ctx, 1, "indices"));
  MEMOPT_RETURN_IF_ERROR(RequireFloatInput(ctx, 2, "update"));
  const Tensor& indices = ctx.input(1);
  const Tensor& update = ctx.input(2);
  const int64_t rank = static_cast<int64_t>(shape.size());
  const int64_t batch_dims = ctx.node->GetInt("batch_dims", 0);
  if (indices.rank() < 1) return ctx.Error("indices must have rank >= 1");
  const int64_t k = indices.dim(indices.rank() - 1);
  if (batch_dims < 0 || batch_dims >= indices.rank() || batch_dims + k > rank) {
    return ctx.Error("indices " + indices.Describe() + " with batch_dims " + std::to_string(batch_dims) +
                     " do not index shape " + ShapeToString(shape));
  }
  const int64_t batches = ShapeProduct(shape, 0, batch_dims);
  const int64_t per_batch = ShapeProduct(indices.shape(), batch_dims, indices.rank() - 1);
  const int64_t slice = ShapeProduct(shape, batch_dims + k, rank);
  const int64_t batch_stride = ShapeProduct(shape, batch_dims, rank);
  if (ShapeProduct(indices.shape(), 0, batch_dims) != batches || update.numel() != batches * per_batch * slice) {
    return ctx.Error("update " + update.Describe() + " does not match indices " + indices.Describe() + " into shape " +
                     ShapeToString(shape));
  }
  const std::vector<int64_t> idx = ReadIndices(indices);
  const std::vector<int64_t> strides = Strides(shape);
  std::vector<int64_t> offsets(static_cast<size_t>(batches * per_batch));
  for (int64_t b = 0; b < batches; ++b) {
    for (int64_t j = 0; j < per_batch; ++j) {
      const int64_t t = b * per_batch + j;
      int64_t off = b * batch_stride;
      for (int64_t m = 0; m < k; ++m) {
        const size_t d = static_cast<size_t>(batch_dims + m);
        MEMOPT_ASSIGN_OR_RETURN(int64_t c, WrapIndex(ctx, idx[static_cast<size_t>(t * k + m)], shape[d]));
        off += c * strides[d];
      }
      offsets[static_cast<size_t>(t)] = off;
    }
  }
  ctx.outputs[0] = Tensor(update.dtype(), shape);
  return DispatchCompute(ctx, update.dtype(), [&]<typename C>() -> Status {
    Tensor& dx = ctx.outputs[0];
    if (StoredAs<C>(dx)) {  // update has dX's type: added in place, slice by slice in order
      const C* u = update.data<C>();
      C* out = dx.data<C>();
      for (size_t t = 0; t < offsets.size(); ++t) {
        const C* src = u + static_cast<int64_t>(t) * slice;
        C* dst = out + offsets[t];
        for (int64_t e = 0; e < slice; ++e) dst[e] += src[e];
      }
      return Status::Ok();
    }
    // 16-bit dX: slices grouped by target (offsets are multiples of `slice`, so two slices hit
    // the same elements or none), summed in C in update order, rounded into dX once.
    std::vector<size_t> order(offsets.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](size_t l, size_t r) { return offsets[l] < offsets[r]; });
    std::vector<C> sum(static_cast<size_t>(slice)), src(static_cast<size_t>(slice));
    for (size_t k = 0; k < order.size();) {
      const int64_t off = offsets[order[k]];
      std::fill(sum.begin(), sum.end(), C(0));
      for (; k < order.size() && offsets[order[k]] == off; ++k) {
        ConvertRange(update, static_cast<int64_t>(order[k]) * slice, slice, src.data());
        for (int64_t e = 0; e < slice; ++e) sum[static_cast<size_t>(e)] += src[static_cast<size_t>(e)];
      }
      StoreRange(sum.data(), slice, dx, off);
    }
    return Status::Ok();
  });
}

// SliceGrad(dY, shape, starts, ends, axes?, steps?): dX = zeros(shape) with the Slice region = dY.
Status SliceGradKernel(KernelContext& ctx) {
  MEMOPT_RETURN_IF_ERROR(RequireInput(ctx, 0, "dY"));
  MEMOPT_ASSIGN_OR_RETURN(std::vector<int64_t> shape, ReadShapeInput(ctx, 1, "shape"));
  const Tensor& dy = ctx.input(0);
  auto region = DecodeSliceGrad(shape, ctx.inputs, tensor_kernels::HostInts(ctx));
  if (!region.ok()) return ctx.Error(region.status().message());
  const SliceAddress a = AddressOf(shape, *region);
  if (NumElements(a.counts) != dy.numel()) {
    return ctx.Error("dY " + dy.Describe() + " does not match the slice " + ShapeToString(a.counts) + " of shape " +
                     ShapeToString(shape));
  }
  ctx.outputs[0] = Tensor(dy.dtype(), shape);
  if (dy.numel() == 0) return Status::Ok();
  Status st = DispatchBySize(dy.dtype(), [&](auto tag) {
    using U = typename decltype(tag)::type;
    const U* src = static_cast<const U*>(dy.raw());
    U* dst = static_cast<U*>(ctx.outputs[0].raw());
    ForEachIndexed(a.counts, {a.strides}, [&](int64_t i, const int64_t* off) { dst[a.offset + off[0]] = src[i]; });
  });
  if (!st.ok()) return ctx.Error("SliceGrad: " + st.message());
  return Status::Ok();
}

}  // namespace

static void RegisterShapeGradKernels(OpRegistry& r) {
  const auto types = FloatTypes();
  r.SetCpuKernel(kMsDomain, "DivGrad", DivGradKernel, types);
  r.SetCpuKernel(kMsDomain, "BroadcastGradientArgs", BroadcastGradientArgsKernel, {DataType::kInt64});
  r.SetCpuKernel(kMsDomain, "GatherGrad", GatherGradKernel);  // input 0 is the int64 shape
  r.SetCpuKernel(kMsDomain, "GatherElementsGrad", GatherElementsGradKernel, types);
  r.SetCpuKernel(kMsDomain, "GatherNDGrad", GatherNDGradKernel);
  r.SetCpuKernel(kMsDomain, "SliceGrad", SliceGradKernel);
}

}  // namespace memopt::training

MEMOPT_OPS(index, index_grad_cpu) {
  memopt::training::RegisterShapeGradKernels(ops);
}
