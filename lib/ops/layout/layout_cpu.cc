// Ops that move elements without computing on them: Transpose, Concat, Split, Expand, Tile,
// DepthToSpace, SpaceToDepth and the training layout ops com.microsoft ConcatTraining and
// SplitTraining. All are type-agnostic (bytes, or strings).
#include <numeric>

#include "exec/kernels/concat_shape.h"
#include "exec/kernels/kernel_util.h"
#include "exec/kernels/split_sizes.h"
#include "exec/kernels/tensor_common.h"
#include "ir/op_registry.h"

namespace memopt::tensor_kernels {
namespace {

Status TransposeKernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const int64_t r = x.rank();
  std::vector<int64_t> perm = ctx.node->GetInts("perm");
  if (perm.empty()) {
    perm.resize(static_cast<size_t>(r));
    for (int64_t i = 0; i < r; ++i) perm[i] = r - 1 - i;
  }
  if (static_cast<int64_t>(perm.size()) != r) {
    return ctx.Error("perm " + ListToString(perm) + " does not match the rank of " + x.Describe());
  }
  std::vector<bool> seen(static_cast<size_t>(r), false);
  for (int64_t& p : perm) {
    if (p < 0) p += r;
    if (p < 0 || p >= r || seen[p])
      return ctx.Error("perm " + ListToString(ctx.node->GetInts("perm")) + " is not a permutation of 0.." +
                       std::to_string(r - 1));
    seen[p] = true;
  }
  ctx.outputs[0] = TransposeView(x, x.shape(), perm);
  return Status::Ok();
}

// Concatenates ctx's inputs [0, n) along `axis` into a new tensor.
Expected<Tensor> ConcatInputs(const KernelContext& ctx, int64_t axis_attr) {
  std::vector<const Tensor*> ins;
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    if (ctx.has_input(i)) ins.push_back(ctx.inputs[i]);
  }
  if (ins.empty()) return ctx.Error("needs at least one input");
  const Tensor& first = *ins[0];
  const int64_t r = first.rank();
  MEMOPT_ASSIGN_OR_RETURN(int64_t axis, CheckedAxis(ctx, axis_attr, r));
  std::vector<ConcatPart> parts;
  for (const Tensor* t : ins) parts.push_back({t->dtype(), t->shape()});
  auto joined = ConcatShape(parts, axis);
  if (!joined.ok()) return ctx.Error(joined.status().message());
  const std::vector<int64_t>& shape = *joined;
  Tensor out = NewTensor(first.dtype(), shape);
  const int64_t outer = ProductOf(shape, 0, axis);
  const int64_t inner = ProductOf(shape, axis + 1, r);
  const int64_t out_row = shape[axis] * inner;
  int64_t offset = 0;
  for (const Tensor* t : ins) {
    const int64_t len = t->dim(axis) * inner;
    if (len > 0) {
      // A [outer, len] block copied into columns [offset, offset + len) of [outer, out_row].
      StridedCopy(*t, 0, {len, 1}, out, offset, {out_row, 1}, {outer, len});
    }
    offset += len;
  }
  return out;
}

Status ConcatKernel(KernelContext& ctx) {
  if (!ctx.node->HasAttr("axis") && ctx.node->since_version >= 4) return ctx.Error("the 'axis' attribute is missing");
  MEMOPT_ASSIGN_OR_RETURN(ctx.outputs[0], ConcatInputs(ctx, ctx.node->GetInt("axis", 1)));
  return Status::Ok();
}

Status ConcatTrainingKernel(KernelContext& ctx) {
  if (!ctx.node->HasAttr("axis")) return ctx.Error("the 'axis' attribute is missing");
  const int64_t axis_attr = ctx.node->GetInt("axis", 0);
  MEMOPT_ASSIGN_OR_RETURN(ctx.outputs[0], ConcatInputs(ctx, axis_attr));
  if (ctx.output_wanted(1)) {
    std::vector<int64_t> lengths;
    const int64_t axis = *NormalizeAxis(axis_attr, ctx.outputs[0].rank());
    for (int i = 0; i < ctx.num_inputs(); ++i) {
      if (ctx.has_input(i)) lengths.push_back(ctx.input(i).dim(axis));
    }
    Tensor len(DataType::kInt64, {static_cast<int64_t>(lengths.size())});
    for (size_t i = 0; i < lengths.size(); ++i) len.data<int64_t>()[i] = lengths[i];
    ctx.outputs[1] = std::move(len);
  }
  return Status::Ok();
}

// Writes the pieces of input 0 split along `axis` with `sizes` to the outputs.
Status SplitInto(KernelContext& ctx, int64_t axis, const std::vector<int64_t>& sizes) {
  const Tensor& x = ctx.input(0);
  Status fits = CheckSplitSizes(sizes, ctx.outputs.size(), axis, x.dim(axis), x.Describe());
  if (!fits.ok()) return ctx.Error(fits.message());
  const int64_t outer = ProductOf(x.shape(), 0, axis);
  const int64_t inner = ProductOf(x.shape(), axis + 1, x.rank());
  const int64_t in_row = x.dim(axis) * inner;
  int64_t offset = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    const int64_t len = sizes[i] * inner;
    if (ctx.output_wanted(static_cast<int>(i))) {
      std::vector<int64_t> shape = x.shape();
      shape[axis] = sizes[i];
      Tensor out = NewTensor(x.dtype(), shape);
      if (len > 0) StridedCopy(x, offset, {in_row, 1}, out, 0, {len, 1}, {outer, len});
      ctx.outputs[i] = std::move(out);
    }
    offset += len;
  }
  return Status::Ok();
}

Status SplitKernel(KernelContext& ctx) {
  auto plan = DecodeSplit(*ctx.node, ctx.input(0), ctx.inputs, ctx.outputs.size(), HostInts(ctx));
  if (!plan.ok()) return ctx.Error(plan.status().message());
  return SplitInto(ctx, plan->axis, plan->sizes);
}

Status SplitTrainingKernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  MEMOPT_ASSIGN_OR_RETURN(int64_t axis, CheckedAxis(ctx, ctx.node->GetInt("axis", 0), x.rank()));
  std::vector<int64_t> sizes;
  if (ctx.has_input(1)) {
    MEMOPT_ASSIGN_OR_RETURN(sizes, ReadIntInput(ctx, 1, "split"));
  }
  if (sizes.empty()) {  // even split, the remainder going to the first outputs
    const int64_t n = static_cast<int64_t>(ctx.outputs.size());
    const int64_t dim = x.dim(axis);
    for (int64_t i = 0; i < n; ++i) sizes.push_back(dim / n + (i < dim % n ? 1 : 0));
  }
  return SplitInto(ctx, axis, sizes);
}

Status ExpandKernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  MEMOPT_ASSIGN_OR_RETURN(std::vector<int64_t> shape, ReadIntInput(ctx, 1, "shape"));
  auto out_shape = BroadcastShape(x.shape(), shape);
  if (!out_shape) {
    return ctx.Error("cannot expand " + x.Describe() + " to " + ListToString(shape) + " (shapes do not broadcast)");
  }
  Tensor out = NewTensor(x.dtype(), *out_shape);
  StridedCopy(x, 0, BroadcastStrides(x.shape(), *out_shape), out, 0, Strides(*out_shape), *out_shape);
  ctx.outputs[0] = std::move(out);
  return Status::Ok();
}

Status TileKernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  MEMOPT_ASSIGN_OR_RETURN(std::vector<int64_t> repeats, ReadIntInput(ctx, 1, "repeats"));
  if (static_cast<int64_t>(repeats.size()) != x.rank()) {
    return ctx.Error("repeats " + ListToString(repeats) + " must have one entry per dim of " + x.Describe());
  }
  // out viewed as [r0, d0, r1, d1, ...] reads x with stride 0 on the repeat dims.
  const std::vector<int64_t> in_strides = Strides(x.shape());
  std::vector<int64_t> out_shape, view_shape, src_strides;
  for (int64_t d = 0; d < x.rank(); ++d) {
    if (repeats[d] < 0) return ctx.Error("repeats " + ListToString(repeats) + " has a negative entry");
    out_shape.push_back(x.dim(d) * repeats[d]);
    view_shape.push_back(repeats[d]);
    view_shape.push_back(x.dim(d));
    src_strides.push_back(0);
    src_strides.push_back(in_strides[d]);
  }
  Tensor out = NewTensor(x.dtype(), out_shape);
  StridedCopy(x, 0, src_strides, out, 0, Strides(view_shape), view_shape);
  ctx.outputs[0] = std::move(out);
  return Status::Ok();
}

Status DepthToSpaceKernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const int64_t b = ctx.node->GetInt("blocksize", 0);
  if (x.rank() != 4) return ctx.Error("input must be 4-D [N, C, H, W], got " + x.Describe());
  if (b <= 0 || x.dim(1) % (b * b) != 0) {
    return ctx.Error("blocksize " + std::to_string(b) + " must be positive and blocksize^2 must divide C of " +
                     x.Describe());
  }
  const int64_t n = x.dim(0), c = x.dim(1) / (b * b), h = x.dim(2), w = x.dim(3);
  const bool crd = ctx.node->GetString("mode", "DCR") == "CRD";
  Tensor t = crd ? TransposeView(x, {n, c, b, b, h, w}, {0, 1, 4, 2, 5, 3})
                 : TransposeView(x, {n, b, b, c, h, w}, {0, 3, 4, 1, 5, 2});
  ctx.outputs[0] = ReshapeView(t, {n, c, h * b, w * b});
  return Status::Ok();
}

Status SpaceToDepthKernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const int64_t b = ctx.node->GetInt("blocksize", 0);
  if (x.rank() != 4) return ctx.Error("input must be 4-D [N, C, H, W], got " + x.Describe());
  if (b <= 0 || x.dim(2) % b != 0 || x.dim(3) % b != 0) {
    return ctx.Error("blocksize " + std::to_string(b) + " must be positive and divide H and W of " + x.Describe());
  }
  const int64_t n = x.dim(0), c = x.dim(1), h = x.dim(2) / b, w = x.dim(3) / b;
  Tensor t = TransposeView(x, {n, c, h, b, w, b}, {0, 3, 5, 1, 2, 4});
  ctx.outputs[0] = ReshapeView(t, {n, c * b * b, h, w});
  return Status::Ok();
}

}  // namespace

static void RegisterLayoutKernels(OpRegistry& r) {
  r.SetCpuKernel("", "Transpose", TransposeKernel);
  r.SetCpuKernel("", "Concat", ConcatKernel);
  r.SetCpuKernel("", "Split", SplitKernel);
  r.SetCpuKernel("", "Expand", ExpandKernel);
  r.SetCpuKernel("", "Tile", TileKernel);
  r.SetCpuKernel("", "DepthToSpace", DepthToSpaceKernel);
  r.SetCpuKernel("", "SpaceToDepth", SpaceToDepthKernel);
  r.SetCpuKernel("com.microsoft", "ConcatTraining", ConcatTrainingKernel);
  r.SetCpuKernel("com.microsoft", "SplitTraining", SplitTrainingKernel);
}

}  // namespace memopt::tensor_kernels

MEMOPT_OPS(layout, layout_cpu) {
  memopt::tensor_kernels::RegisterLayoutKernels(ops);
}
