// Slice (attribute form before opset 10, inputs from 10, negative steps, clamping), Pad
// (constant/reflect/edge/wrap, attribute forms before 11, axes input from 18) and CenterCropPad.
#include <algorithm>

#include "exec/kernels/kernel_util.h"
#include "exec/kernels/slice_region.h"
#include "exec/kernels/tensor_common.h"
#include "ir/op_registry.h"

namespace memopt::tensor_kernels {
namespace {

Status SliceKernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  auto region = DecodeSlice(*ctx.node, x.shape(), ctx.inputs, HostInts(ctx));
  if (!region.ok()) return ctx.Error(region.status().message());
  const SliceAddress a = AddressOf(x.shape(), *region);
  Tensor out = NewTensor(x.dtype(), a.counts);
  if (out.numel() > 0) StridedCopy(x, a.offset, a.strides, out, 0, Strides(a.counts), a.counts);
  ctx.outputs[0] = std::move(out);
  return Status::Ok();
}

// Source coordinate of padded coordinate `i` (may lie outside [0, n)) for the non-constant modes.
int64_t PadSource(int64_t i, int64_t n, const std::string& mode) {
  if (mode == "edge") return std::clamp<int64_t>(i, 0, n - 1);
  if (mode == "wrap") return ((i % n) + n) % n;
  // reflect (numpy 'reflect': the edge element is not repeated)
  if (n == 1) return 0;
  const int64_t period = 2 * (n - 1);
  int64_t m = ((i % period) + period) % period;
  return m < n ? m : period - m;
}

Status PadKernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const int64_t r = x.rank();
  const std::string mode = ctx.node->GetString("mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge" && mode != "wrap") {
    return ctx.Error("unknown mode '" + mode + "' (expected constant, reflect, edge or wrap)");
  }
  std::vector<int64_t> pads;
  Tensor value = NewTensor(x.dtype(), {});
  const bool input_form = ctx.has_input(1) || ctx.node->since_version >= 11;
  if (input_form) {
    MEMOPT_ASSIGN_OR_RETURN(pads, ReadIntInput(ctx, 1, "pads"));
    if (ctx.has_input(2) && ctx.input(2).numel() > 0) {
      if (ctx.input(2).dtype() != x.dtype()) {
        return ctx.Error("constant_value " + ctx.input(2).Describe() + " must have the type of the data " +
                         x.Describe());
      }
      CopyElements(ctx.input(2), 0, value, 0, 1);
    }
  } else {
    pads = ctx.node->HasAttr("pads") ? ctx.node->GetInts("pads") : ctx.node->GetInts("paddings");
    const double v = ctx.node->GetFloat("value", 0.0f);
    if (x.dtype() != DataType::kString) value.SetFromDouble(0, v);
  }
  std::vector<int64_t> axes;
  if (ctx.has_input(3)) {
    MEMOPT_ASSIGN_OR_RETURN(std::vector<int64_t> raw_axes, ReadIntInput(ctx, 3, "axes"));
    for (int64_t a : raw_axes) {
      MEMOPT_ASSIGN_OR_RETURN(int64_t n, CheckedAxis(ctx, a, r, "pad axis"));
      axes.push_back(n);
    }
  } else {
    for (int64_t d = 0; d < r; ++d) axes.push_back(d);
  }
  const int64_t na = static_cast<int64_t>(axes.size());
  if (static_cast<int64_t>(pads.size()) != 2 * na) {
    return ctx.Error("pads " + ListToString(pads) + " must have 2 * " + std::to_string(na) + " entries for " +
                     x.Describe());
  }
  std::vector<int64_t> before(static_cast<size_t>(r), 0), after(static_cast<size_t>(r), 0);
  for (int64_t i = 0; i < na; ++i) {
    before[axes[i]] = pads[i];
    after[axes[i]] = pads[na + i];
  }
  std::vector<int64_t> shape(static_cast<size_t>(r));
  for (int64_t d = 0; d < r; ++d) {
    shape[d] = x.dim(d) + before[d] + after[d];
    if (shape[d] < 0) {
      return ctx.Error("pads " + ListToString(pads) + " remove more than axis " + std::to_string(d) + " of " +
                       x.Describe() + " holds");
    }
  }
  Tensor out = NewTensor(x.dtype(), shape);
  if (out.numel() > 0) {
    if (mode == "constant") {
      FillWithElement(out, value, 0);
      // Copy the part of x that lands inside the output.
      const std::vector<int64_t> in_strides = Strides(x.shape()), out_strides = Strides(shape);
      std::vector<int64_t> region(static_cast<size_t>(r));
      int64_t src_off = 0, dst_off = 0;
      bool empty = false;
      for (int64_t d = 0; d < r; ++d) {
        const int64_t lo = std::max<int64_t>(0, -before[d]);                   // first source index kept
        const int64_t hi = std::min<int64_t>(x.dim(d), shape[d] - before[d]);  // one past the last
        region[d] = std::max<int64_t>(0, hi - lo);
        empty = empty || region[d] == 0;
        src_off += lo * in_strides[d];
        dst_off += (lo + before[d]) * out_strides[d];
      }
      if (!empty) StridedCopy(x, src_off, in_strides, out, dst_off, out_strides, region);
    } else {
      std::vector<std::vector<int64_t>> maps(static_cast<size_t>(r));
      for (int64_t d = 0; d < r; ++d) {
        if (x.dim(d) == 0) {
          return ctx.Error("mode '" + mode + "' cannot pad the empty axis " + std::to_string(d) + " of " +
                           x.Describe());
        }
        maps[d].resize(static_cast<size_t>(shape[d]));
        for (int64_t o = 0; o < shape[d]; ++o) maps[d][o] = PadSource(o - before[d], x.dim(d), mode);
      }
      CopyWithIndexMaps(x, out, maps);
    }
  }
  ctx.outputs[0] = std::move(out);
  return Status::Ok();
}

Status CenterCropPadKernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const int64_t r = x.rank();
  MEMOPT_ASSIGN_OR_RETURN(std::vector<int64_t> target, ReadIntInput(ctx, 1, "shape"));
  std::vector<int64_t> axes = ctx.node->GetInts("axes");
  if (axes.empty()) {
    for (int64_t d = 0; d < r; ++d) axes.push_back(d);
  }
  if (axes.size() != target.size()) {
    return ctx.Error("shape " + ListToString(target) + " must have one entry per axis " + ListToString(axes));
  }
  std::vector<int64_t> shape = x.shape(), src_begin(static_cast<size_t>(r), 0), dst_begin(static_cast<size_t>(r), 0),
                       region = x.shape();
  for (size_t i = 0; i < axes.size(); ++i) {
    MEMOPT_ASSIGN_OR_RETURN(int64_t a, CheckedAxis(ctx, axes[i], r));
    const int64_t dim = x.dim(a), want = target[i];
    if (want < 0) return ctx.Error("shape " + ListToString(target) + " has a negative entry");
    shape[a] = want;
    if (want < dim) {
      src_begin[a] = (dim - want) / 2;
      region[a] = want;
    } else {
      dst_begin[a] = (want - dim) / 2;
    }
  }
  Tensor out = NewTensor(x.dtype(), shape);
  const std::vector<int64_t> in_strides = Strides(x.shape()), out_strides = Strides(shape);
  int64_t src_off = 0, dst_off = 0;
  for (int64_t d = 0; d < r; ++d) {
    src_off += src_begin[d] * in_strides[d];
    dst_off += dst_begin[d] * out_strides[d];
  }
  if (out.numel() > 0) StridedCopy(x, src_off, in_strides, out, dst_off, out_strides, region);
  ctx.outputs[0] = std::move(out);
  return Status::Ok();
}

}  // namespace

static void RegisterSliceKernels(OpRegistry& r) {
  r.SetCpuKernel("", "Slice", SliceKernel);
  r.SetCpuKernel("", "Pad", PadKernel);
  r.SetCpuKernel("", "CenterCropPad", CenterCropPadKernel);
}

}  // namespace memopt::tensor_kernels

MEMOPT_OPS(index, slice_cpu) {
  memopt::tensor_kernels::RegisterSliceKernels(ops);
}
