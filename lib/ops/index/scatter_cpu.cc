// Indexing writes: ScatterND and ScatterElements (reduction none/add/mul/max/min) and the
// deprecated Scatter (= ScatterElements without reduction).
#include <algorithm>

#include "exec/kernels/kernel_util.h"
#include "exec/kernels/tensor_common.h"
#include "ir/op_registry.h"

namespace memopt::tensor_kernels {
namespace {

enum class Reduction { kNone, kAdd, kMul, kMax, kMin };

Expected<Reduction> ParseReduction(const KernelContext& ctx) {
  const std::string s = ctx.node->GetString("reduction", "none");
  if (s == "none") return Reduction::kNone;
  if (s == "add") return Reduction::kAdd;
  if (s == "mul") return Reduction::kMul;
  if (s == "max") return Reduction::kMax;
  if (s == "min") return Reduction::kMin;
  return ctx.Error("unknown reduction '" + s + "' (expected none, add, mul, max or min)");
}

template <typename T>
T Combine(Reduction red, T a, T b) {
  using C = ComputeType<T>;
  const C x = Load(a), y = Load(b);
  switch (red) {
    case Reduction::kAdd:
      return StoreAs<T>(x + y);
    case Reduction::kMul:
      return StoreAs<T>(x * y);
    case Reduction::kMax:
      return StoreAs<T>(std::max(x, y));
    case Reduction::kMin:
      return StoreAs<T>(std::min(x, y));
    case Reduction::kNone:
      break;
  }
  return b;
}

// Applies out[dst_offsets[i] + j] (op)= updates[i * slice + j] for every i and j < slice.
Status ApplyUpdates(const KernelContext& ctx, Reduction red, const Tensor& updates, Tensor& out,
                    const std::vector<int64_t>& dst_offsets, int64_t slice) {
  if (updates.dtype() != out.dtype()) {
    return ctx.Error("updates " + updates.Describe() + " must have the type of the data " + out.Describe());
  }
  const int64_t n = static_cast<int64_t>(dst_offsets.size());
  if (red == Reduction::kNone) {
    for (int64_t i = 0; i < n; ++i) CopyElements(updates, i * slice, out, dst_offsets[i], slice);
    return Status::Ok();
  }
  auto typed = [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* u = updates.data<T>();
    T* o = out.data<T>();
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < slice; ++j)
        o[dst_offsets[i] + j] = Combine<T>(red, o[dst_offsets[i] + j], u[i * slice + j]);
    }
  };
  if (out.dtype() == DataType::kBool) {
    // bool: add = or, mul = and, max = or, min = and.
    uint8_t* o = out.data<uint8_t>();
    const uint8_t* u = updates.data<uint8_t>();
    const bool is_or = red == Reduction::kAdd || red == Reduction::kMax;
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < slice; ++j) {
        uint8_t& v = o[dst_offsets[i] + j];
        v = is_or ? (v | u[i * slice + j]) : (v & u[i * slice + j]);
      }
    }
    return Status::Ok();
  }
  Status st = DispatchNumeric(out.dtype(), typed);
  return st.ok() ? st : ctx.Error(st.message() + " with a reduction");
}

Status ScatterNDKernel(KernelContext& ctx) {
  const Tensor& data = ctx.input(0);
  MEMOPT_ASSIGN_OR_RETURN(std::vector<int64_t> indices, ReadIntInput(ctx, 1, "indices"));
  const Tensor& ind = ctx.input(1);
  const Tensor& updates = ctx.input(2);
  MEMOPT_ASSIGN_OR_RETURN(Reduction red, ParseReduction(ctx));
  if (ind.rank() < 1) return ctx.Error("indices must have rank >= 1, got " + ind.Describe());
  const int64_t k = ind.dim(ind.rank() - 1);
  if (k > data.rank()) return ctx.Error("indices " + ind.Describe() + " index deeper than data " + data.Describe());
  // updates.shape == indices.shape[:-1] + data.shape[k:]
  std::vector<int64_t> want(ind.shape().begin(), ind.shape().end() - 1);
  want.insert(want.end(), data.shape().begin() + k, data.shape().end());
  if (updates.shape() != want) {
    return ctx.Error("updates " + updates.Describe() + " must have shape " + ListToString(want));
  }
  const std::vector<int64_t> strides = Strides(data.shape());
  const int64_t slice = ProductOf(data.shape(), k, data.rank());
  const int64_t tuples = ProductOf(ind.shape(), 0, ind.rank() - 1);
  std::vector<int64_t> offsets(static_cast<size_t>(tuples));
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t off = 0;
    for (int64_t j = 0; j < k; ++j) {
      int64_t i = indices[t * k + j];
      const int64_t dim = data.dim(j);
      if (i < 0) i += dim;
      if (i < 0 || i >= dim) {
        return ctx.Error("index " + std::to_string(indices[t * k + j]) + " is out of range for axis " +
                         std::to_string(j) + " of " + data.Describe());
      }
      off += i * strides[j];
    }
    offsets[t] = off;
  }
  Tensor out = data.Clone();
  MEMOPT_RETURN_IF_ERROR(ApplyUpdates(ctx, red, updates, out, offsets, slice));
  ctx.outputs[0] = std::move(out);
  return Status::Ok();
}

Status ScatterElementsKernel(KernelContext& ctx) {
  const Tensor& data = ctx.input(0);
  MEMOPT_ASSIGN_OR_RETURN(std::vector<int64_t> indices, ReadIntInput(ctx, 1, "indices"));
  const Tensor& ind = ctx.input(1);
  const Tensor& updates = ctx.input(2);
  MEMOPT_ASSIGN_OR_RETURN(Reduction red, ParseReduction(ctx));
  const int64_t r = data.rank();
  if (ind.rank() != r || updates.shape() != ind.shape()) {
    return ctx.Error("indices " + ind.Describe() + " and updates " + updates.Describe() +
                     " must have the same shape and the rank of data " + data.Describe());
  }
  MEMOPT_ASSIGN_OR_RETURN(int64_t axis, CheckedAxis(ctx, ctx.node->GetInt("axis", 0), r));
  for (int64_t d = 0; d < r; ++d) {
    if (d != axis && ind.dim(d) > data.dim(d)) {
      return ctx.Error("indices " + ind.Describe() + " exceed data " + data.Describe() + " on axis " +
                       std::to_string(d));
    }
  }
  std::vector<int64_t> data_strides = Strides(data.shape());
  const int64_t axis_stride = data_strides[axis];
  const int64_t dim = data.dim(axis);
  data_strides[axis] = 0;
  std::vector<int64_t> offsets(static_cast<size_t>(ind.numel()));
  bool bad = false;
  int64_t bad_index = 0;
  ForEachIndexed(ind.shape(), {data_strides}, [&](int64_t i, const int64_t* off) {
    int64_t idx = indices[i];
    if (idx < 0) idx += dim;
    if (idx < 0 || idx >= dim) {
      if (!bad) bad_index = indices[i];
      bad = true;
      idx = 0;
    }
    offsets[i] = off[0] + idx * axis_stride;
  });
  if (bad) {
    return ctx.Error("index " + std::to_string(bad_index) + " is out of range for axis " + std::to_string(axis) +
                     " of " + data.Describe());
  }
  Tensor out = data.Clone();
  MEMOPT_RETURN_IF_ERROR(ApplyUpdates(ctx, red, updates, out, offsets, 1));
  ctx.outputs[0] = std::move(out);
  return Status::Ok();
}

}  // namespace

static void RegisterScatterKernels(OpRegistry& r) {
  r.SetCpuKernel("", "ScatterND", ScatterNDKernel);
  r.SetCpuKernel("", "ScatterElements", ScatterElementsKernel);
  r.SetCpuKernel("", "Scatter", ScatterElementsKernel);
}

}  // namespace memopt::tensor_kernels

MEMOPT_OPS(index, scatter_cpu) {
  memopt::tensor_kernels::RegisterScatterKernels(ops);
}
