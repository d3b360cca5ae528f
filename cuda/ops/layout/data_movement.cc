// Transpose, Concat, Split, Expand, Slice and com.microsoft SliceGrad on the GPU, plus the host
// helpers that gather.cc (Where, Gather, GatherGrad) shares. The wrappers check nodes as the CPU
// kernels do (lib/ops/layout/layout_cpu.cc, ops/index/slice_cpu.cc, ops/index/index_grad_cpu.cc), then
// describe each op as strided copies (data_movement_launch.h). Only the element size matters,
// so every type of 1, 2, 4, 8 or 16 bytes moves; strings cannot live on the GPU.
#include <algorithm>
#include <string>
#include <vector>

#include "cuda_kernel.h"
#include "data_movement_launch.h"
#include "elem_type.h"
#include "exec/kernels/concat_shape.h"
#include "exec/kernels/decode_inputs.h"
#include "exec/kernels/kernel_util.h"
#include "exec/kernels/slice_region.h"
#include "exec/kernels/split_sizes.h"
#include "kernel_util.h"

namespace memopt::cuda {
namespace dm {  // declared in data_movement_launch.h

Status RequireCopyable(const CudaKernelContext& ctx, DataType t) {
  const int64_t es = ElemByteSize(t);
  if (t == DataType::kString || (es != 1 && es != 2 && es != 4 && es != 8 && es != 16)) return ctx.UnsupportedType(t);
  return Status::Ok();
}

/// The CUDA reader of the shared decodes' integer inputs (exec/kernels/decode_inputs.h).
IntListReader DeviceInts(const CudaKernelContext& ctx) {
  return [&ctx](int i) { return ctx.input(i).ToInt64Vector(); };
}

Expected<std::vector<int64_t>> ReadInts(const CudaKernelContext& ctx, int i, const std::string& what) {
  auto v = ReadIntList(InputMetas(ctx).list(), DeviceInts(ctx), i, what);
  if (!v.ok()) return ctx.Error(v.status().message());
  return v;
}

Expected<int64_t> CheckedAxis(const CudaKernelContext& ctx, int64_t axis, int64_t rank, const std::string& what) {
  auto a = ResolveAxis(axis, rank, what);
  if (!a.ok()) return ctx.Error(a.status().message());
  return a;
}

int64_t ProductOf(const std::vector<int64_t>& s, int64_t begin, int64_t end) {
  int64_t p = 1;
  for (int64_t d = begin; d < end; ++d) p *= s[static_cast<size_t>(d)];
  return p;
}

std::vector<int64_t> BroadcastStrides(const std::vector<int64_t>& in, const std::vector<int64_t>& out) {
  const std::vector<int64_t> s = Strides(in);
  std::vector<int64_t> r(out.size(), 0);
  const size_t off = out.size() - in.size();
  for (size_t i = 0; i < in.size(); ++i) r[off + i] = in[i] == 1 ? 0 : s[i];
  return r;
}

bool Collapse(std::vector<int64_t>& dims, std::vector<std::vector<int64_t>>& strides) {
  std::vector<int64_t> nd;
  std::vector<std::vector<int64_t>> ns(strides.size());
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] == 1) continue;
    bool merge = !nd.empty();
    for (size_t k = 0; merge && k < strides.size(); ++k) merge = ns[k].back() == strides[k][d] * dims[d];
    if (merge) {
      nd.back() *= dims[d];
      for (size_t k = 0; k < strides.size(); ++k) ns[k].back() = strides[k][d];
    } else {
      nd.push_back(dims[d]);
      for (size_t k = 0; k < strides.size(); ++k) ns[k].push_back(strides[k][d]);
    }
  }
  dims = std::move(nd);
  strides = std::move(ns);
  return dims.size() <= static_cast<size_t>(kMaxRank);
}

Status TooManyDims(const CudaKernelContext& ctx) {
  return Unsupported("node " + ctx.node->Describe() + ": more than " + std::to_string(kMaxRank) +
                     " dims remain after merging");
}

Expected<std::vector<int64_t>> ReadShape(const CudaKernelContext& ctx, int i, const char* what) {
  MEMOPT_RETURN_IF_ERROR(RequireInput(ctx, i, what));
  const DeviceTensor& t = ctx.input(i);
  if (t.dtype() != DataType::kInt64 && t.dtype() != DataType::kInt32) {
    return ctx.Error(std::string(what) + " " + t.Describe() + " must be an int64 shape tensor");
  }
  MEMOPT_ASSIGN_OR_RETURN(std::vector<int64_t> shape, ReadInts(ctx, i, what));
  for (int64_t d : shape) {
    if (d < 0) return ctx.Error(std::string(what) + " has a negative dim " + std::to_string(d));
  }
  return shape;
}

}  // namespace dm

namespace {

using namespace dm;

/// dst[dst_off + c . dst_strides] = src[src_off + c . src_strides] for every c over `dims`.
Status CopyStrided(const CudaKernelContext& ctx, DataType t, const void* src, int64_t src_off,
                   std::vector<int64_t> src_strides, void* dst, int64_t dst_off, std::vector<int64_t> dst_strides,
                   std::vector<int64_t> dims) {
  if (NumElements(dims) == 0) return Status::Ok();
  std::vector<std::vector<int64_t>> strides = {std::move(src_strides), std::move(dst_strides)};
  if (!Collapse(dims, strides)) return TooManyDims(ctx);
  StridedCopyShape s;
  s.rank = static_cast<int>(dims.size());
  for (int k = 0; k < s.rank; ++k) {
    s.dims[k] = dims[k];
    s.src_strides[k] = strides[0][k];
    s.dst_strides[k] = strides[1][k];
  }
  return Launched(ctx,
                  LaunchStridedCopy(static_cast<int>(ElemByteSize(t)), src, src_off, dst, dst_off, s, ctx.stream()));
}

Status Transpose(CudaKernelContext& ctx) {
  MEMOPT_RETURN_IF_ERROR(RequireInput(ctx, 0, "data"));
  const DeviceTensor& x = ctx.input(0);
  MEMOPT_RETURN_IF_ERROR(RequireCopyable(ctx, x.dtype()));
  const int64_t r = x.rank();
  std::vector<int64_t> perm = ctx.node->GetInts("perm");
  if (perm.empty()) {
    for (int64_t i = 0; i < r; ++i) perm.push_back(r - 1 - i);
  }
  if (static_cast<int64_t>(perm.size()) != r) {
    return ctx.Error("perm " + ShapeToString(perm) + " does not match the rank of " + x.Describe());
  }
  std::vector<bool> seen(static_cast<size_t>(r), false);
  for (int64_t& p : perm) {
    if (p < 0) p += r;
    if (p < 0 || p >= r || seen[p]) {
      return ctx.Error("perm " + ShapeToString(ctx.node->GetInts("perm")) + " is not a permutation of 0.." +
                       std::to_string(r - 1));
    }
    seen[p] = true;
  }
  const std::vector<int64_t> in_strides = Strides(x.shape());
  std::vector<int64_t> shape(static_cast<size_t>(r)), src_strides(static_cast<size_t>(r));
  for (int64_t i = 0; i < r; ++i) {
    shape[i] = x.dim(perm[i]);
    src_strides[i] = in_strides[perm[i]];
  }
  MEMOPT_RETURN_IF_ERROR(ctx.AllocateOutput(0, x.dtype(), shape));
  return CopyStrided(ctx, x.dtype(), x.raw(), 0, src_strides, ctx.outputs[0].raw(), 0, Strides(shape), shape);
}

Status Concat(CudaKernelContext& ctx) {
  if (!ctx.node->HasAttr("axis") && ctx.node->since_version >= 4) return ctx.Error("the 'axis' attribute is missing");
  std::vector<const DeviceTensor*> ins;
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    if (ctx.has_input(i)) ins.push_back(ctx.inputs[i]);
  }
  if (ins.empty()) return ctx.Error("needs at least one input");
  const DeviceTensor& first = *ins[0];
  MEMOPT_RETURN_IF_ERROR(RequireCopyable(ctx, first.dtype()));
  const int64_t r = first.rank();
  MEMOPT_ASSIGN_OR_RETURN(int64_t axis, CheckedAxis(ctx, ctx.node->GetInt("axis", 1), r));
  std::vector<ConcatPart> parts;
  for (const DeviceTensor* t : ins) parts.push_back({t->dtype(), t->shape()});
  auto joined = ConcatShape(parts, axis);  // the CPU kernel's checks (exec/kernels/concat_shape.h)
  if (!joined.ok()) return ctx.Error(joined.status().message());
  const std::vector<int64_t>& shape = *joined;
  MEMOPT_RETURN_IF_ERROR(ctx.AllocateOutput(0, first.dtype(), shape));
  const std::vector<int64_t> out_strides = Strides(shape);
  int64_t offset = 0;
  for (const DeviceTensor* t : ins) {
    MEMOPT_RETURN_IF_ERROR(CopyStrided(ctx, t->dtype(), t->raw(), 0, Strides(t->shape()), ctx.outputs[0].raw(),
                                       offset * out_strides[axis], out_strides, t->shape()));
    offset += t->dim(axis);
  }
  return Status::Ok();
}

Status Split(CudaKernelContext& ctx) {
  MEMOPT_RETURN_IF_ERROR(RequireInput(ctx, 0, "input"));
  const DeviceTensor& x = ctx.input(0);
  MEMOPT_RETURN_IF_ERROR(RequireCopyable(ctx, x.dtype()));
  auto plan = DecodeSplit(*ctx.node, x.Meta(), InputMetas(ctx).list(), ctx.outputs.size(), DeviceInts(ctx));
  if (!plan.ok()) return ctx.Error(plan.status().message());
  const int64_t axis = plan->axis;
  const std::vector<int64_t>& sizes = plan->sizes;
  const std::vector<int64_t> in_strides = Strides(x.shape());
  int64_t offset = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (ctx.node->outputs[i] != kNone) {
      std::vector<int64_t> shape = x.shape();
      shape[axis] = sizes[i];
      MEMOPT_RETURN_IF_ERROR(ctx.AllocateOutput(static_cast<int>(i), x.dtype(), shape));
      MEMOPT_RETURN_IF_ERROR(CopyStrided(ctx, x.dtype(), x.raw(), offset * in_strides[axis], in_strides,
                                         ctx.outputs[i].raw(), 0, Strides(shape), shape));
    }
    offset += sizes[i];
  }
  return Status::Ok();
}

Status Expand(CudaKernelContext& ctx) {
  MEMOPT_RETURN_IF_ERROR(RequireInput(ctx, 0, "input"));
  const DeviceTensor& x = ctx.input(0);
  MEMOPT_RETURN_IF_ERROR(RequireCopyable(ctx, x.dtype()));
  MEMOPT_ASSIGN_OR_RETURN(std::vector<int64_t> shape, ReadInts(ctx, 1, "shape"));
  auto out_shape = BroadcastShapes(x.shape(), shape);
  if (!out_shape.ok()) {
    return ctx.Error("cannot expand " + x.Describe() + " to " + ShapeToString(shape) + " (shapes do not broadcast)");
  }
  MEMOPT_RETURN_IF_ERROR(ctx.AllocateOutput(0, x.dtype(), *out_shape));
  return CopyStrided(ctx, x.dtype(), x.raw(), 0, BroadcastStrides(x.shape(), *out_shape), ctx.outputs[0].raw(), 0,
                     Strides(*out_shape), *out_shape);
}

Status Slice(CudaKernelContext& ctx) {
  MEMOPT_RETURN_IF_ERROR(RequireInput(ctx, 0, "data"));
  const DeviceTensor& x = ctx.input(0);
  MEMOPT_RETURN_IF_ERROR(RequireCopyable(ctx, x.dtype()));
  auto region = DecodeSlice(*ctx.node, x.shape(), InputMetas(ctx).list(), DeviceInts(ctx));
  if (!region.ok()) return ctx.Error(region.status().message());
  const SliceAddress a = AddressOf(x.shape(), *region);
  MEMOPT_RETURN_IF_ERROR(ctx.AllocateOutput(0, x.dtype(), a.counts));
  return CopyStrided(ctx, x.dtype(), x.raw(), a.offset, a.strides, ctx.outputs[0].raw(), 0, Strides(a.counts),
                     a.counts);
}

Status SliceGrad(CudaKernelContext& ctx) {
  MEMOPT_RETURN_IF_ERROR(RequireInput(ctx, 0, "dY"));
  const DeviceTensor& dy = ctx.input(0);
  MEMOPT_RETURN_IF_ERROR(RequireCopyable(ctx, dy.dtype()));
  MEMOPT_ASSIGN_OR_RETURN(std::vector<int64_t> shape, ReadShape(ctx, 1, "shape"));
  auto region = DecodeSliceGrad(shape, InputMetas(ctx).list(), DeviceInts(ctx));
  if (!region.ok()) return ctx.Error(region.status().message());
  const SliceAddress a = AddressOf(shape, *region);
  if (NumElements(a.counts) != dy.numel()) {
    return ctx.Error("dY " + dy.Describe() + " does not match the slice " + ShapeToString(a.counts) + " of shape " +
                     ShapeToString(shape));
  }
  MEMOPT_RETURN_IF_ERROR(ctx.AllocateOutput(0, dy.dtype(), shape));
  DeviceTensor& dx = ctx.outputs[0];
  if (dx.bytes() == 0) return Status::Ok();
  MEMOPT_RETURN_IF_ERROR(Launched(ctx, cudaMemsetAsync(dx.raw(), 0, static_cast<size_t>(dx.bytes()), ctx.stream())));
  return CopyStrided(ctx, dy.dtype(), dy.raw(), 0, Strides(a.counts), dx.raw(), a.offset, a.strides, a.counts);
}

constexpr const char* kMs = "com.microsoft";

}  // namespace

MEMOPT_CUDA_OPS(layout, data_movement) {
  r.Register("", "Transpose", Transpose);
  r.Register("", "Concat", Concat);
  r.Register("", "Split", Split);
  r.Register("", "Expand", Expand);
  r.Register("", "Slice", Slice);
  r.Register(kMs, "SliceGrad", SliceGrad);
}

}  // namespace memopt::cuda
