// Shape, Size and the view ops that only change the shape: Reshape, Flatten, Squeeze, Unsqueeze.
// The view ops share the input's buffer (Tensor::Reshaped); memory accounting still counts their
// outputs as new values, like the static estimate.
#include <algorithm>

#include "exec/kernels/kernel_util.h"
#include "exec/kernels/tensor_common.h"
#include "ir/op_registry.h"

namespace memopt::tensor_kernels {
namespace {

Status ShapeKernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const int64_t r = x.rank();
  int64_t start = ctx.node->GetInt("start", 0);
  int64_t end = ctx.node->GetInt("end", r);
  if (start < 0) start += r;
  if (end < 0) end += r;
  start = std::clamp<int64_t>(start, 0, r);
  end = std::clamp<int64_t>(end, 0, r);
  const int64_t n = std::max<int64_t>(0, end - start);
  Tensor out(DataType::kInt64, {n});
  for (int64_t i = 0; i < n; ++i) out.data<int64_t>()[i] = x.dim(start + i);
  ctx.outputs[0] = std::move(out);
  return Status::Ok();
}

Status SizeKernel(KernelContext& ctx) {
  Tensor out(DataType::kInt64, {});
  out.data<int64_t>()[0] = ctx.input(0).numel();
  ctx.outputs[0] = std::move(out);
  return Status::Ok();
}

Status ReshapeKernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  std::vector<int64_t> requested;
  if (ctx.has_input(1)) {
    MEMOPT_ASSIGN_OR_RETURN(requested, ReadIntInput(ctx, 1, "shape"));
  } else if (ctx.node->HasAttr("shape")) {  // Reshape-1
    requested = ctx.node->GetInts("shape");
  } else {
    return ctx.Error("the 'shape' input is missing");
  }
  const bool allow_zero = ctx.node->GetInt("allowzero", 0) != 0;
  std::vector<int64_t> shape(requested.size());
  int64_t infer_at = -1;
  int64_t known = 1;
  for (size_t i = 0; i < requested.size(); ++i) {
    int64_t d = requested[i];
    if (d == 0 && !allow_zero) {
      if (static_cast<int64_t>(i) >= x.rank()) {
        return ctx.Error("shape " + ListToString(requested) + " copies dim " + std::to_string(i) +
                         " (0) but the input " + x.Describe() + " has rank " + std::to_string(x.rank()));
      }
      d = x.dim(static_cast<int64_t>(i));
    } else if (d == -1) {
      if (infer_at >= 0) return ctx.Error("shape " + ListToString(requested) + " has more than one -1");
      infer_at = static_cast<int64_t>(i);
      continue;
    } else if (d < 0) {
      return ctx.Error("shape " + ListToString(requested) + " has a negative dim other than -1");
    }
    shape[i] = d;
    known *= d;
  }
  if (infer_at >= 0) {
    if (known == 0 || x.numel() % known != 0) {
      return ctx.Error("cannot reshape " + x.Describe() + " to " + ListToString(requested) +
                       ": the -1 dim cannot be inferred");
    }
    shape[infer_at] = x.numel() / known;
  } else if (known != x.numel()) {
    return ctx.Error("cannot reshape " + x.Describe() + " (" + std::to_string(x.numel()) + " elements) to " +
                     ListToString(shape) + " (" + std::to_string(known) + " elements)");
  }
  ctx.outputs[0] = ReshapeView(x, std::move(shape));
  return Status::Ok();
}

Status FlattenKernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const int64_t r = x.rank();
  int64_t axis = ctx.node->GetInt("axis", 1);
  if (axis < -r || axis > r) {
    return ctx.Error("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(r) + " (valid: [" +
                     std::to_string(-r) + ", " + std::to_string(r) + "])");
  }
  if (axis < 0) axis += r;
  const int64_t outer = ProductOf(x.shape(), 0, axis);
  const int64_t inner = ProductOf(x.shape(), axis, r);
  ctx.outputs[0] = ReshapeView(x, {outer, inner});
  return Status::Ok();
}

// Axes from the attribute (before opset 13) or from input 1 (opset 13+); nullopt when absent.
Expected<std::optional<std::vector<int64_t>>> AxesAttrOrInput(const KernelContext& ctx) {
  if (ctx.has_input(1)) {
    MEMOPT_ASSIGN_OR_RETURN(std::vector<int64_t> axes, ReadIntInput(ctx, 1, "axes"));
    return std::optional<std::vector<int64_t>>(std::move(axes));
  }
  if (ctx.node->HasAttr("axes")) return std::optional<std::vector<int64_t>>(ctx.node->GetInts("axes"));
  return std::optional<std::vector<int64_t>>();
}

Status SqueezeKernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  MEMOPT_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> axes, AxesAttrOrInput(ctx));
  std::vector<bool> drop(static_cast<size_t>(x.rank()), false);
  if (axes && !axes->empty()) {  // an empty axes list squeezes every size-1 dim, like no axes
    auto norm = NormalizeAxes(*axes, x.rank());
    if (!norm) {
      return ctx.Error("axes " + ListToString(*axes) + " are out of range or repeated for " + x.Describe());
    }
    for (int64_t a : *norm) {
      if (x.dim(a) != 1) {
        return ctx.Error("cannot squeeze axis " + std::to_string(a) + " of " + x.Describe() + ": its size is not 1");
      }
      drop[a] = true;
    }
  } else {
    for (int64_t a = 0; a < x.rank(); ++a) drop[a] = x.dim(a) == 1;
  }
  std::vector<int64_t> shape;
  for (int64_t a = 0; a < x.rank(); ++a) {
    if (!drop[a]) shape.push_back(x.dim(a));
  }
  ctx.outputs[0] = ReshapeView(x, std::move(shape));
  return Status::Ok();
}

Status UnsqueezeKernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  MEMOPT_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> axes, AxesAttrOrInput(ctx));
  if (!axes) return ctx.Error("the 'axes' are missing (attribute before opset 13, input 1 from opset 13)");
  const int64_t out_rank = x.rank() + static_cast<int64_t>(axes->size());
  auto norm = NormalizeAxes(*axes, out_rank);
  if (!norm) {
    return ctx.Error("axes " + ListToString(*axes) + " are out of range or repeated for output rank " +
                     std::to_string(out_rank));
  }
  std::vector<int64_t> shape;
  size_t next_axis = 0;
  int64_t next_in = 0;
  for (int64_t o = 0; o < out_rank; ++o) {
    if (next_axis < norm->size() && (*norm)[next_axis] == o) {
      shape.push_back(1);
      ++next_axis;
    } else {
      shape.push_back(x.dim(next_in++));
    }
  }
  ctx.outputs[0] = ReshapeView(x, std::move(shape));
  return Status::Ok();
}

}  // namespace

static void RegisterShapeKernels(OpRegistry& r) {
  r.SetCpuKernel("", "Shape", ShapeKernel);
  r.SetCpuKernel("", "Size", SizeKernel);
  r.SetCpuKernel("", "Reshape", ReshapeKernel);
  r.SetCpuKernel("", "Flatten", FlattenKernel);
  r.SetCpuKernel("", "Squeeze", SqueezeKernel);
  r.SetCpuKernel("", "Unsqueeze", UnsqueezeKernel);
}

}  // namespace memopt::tensor_kernels

MEMOPT_OPS(layout, shape_cpu) {
  memopt::tensor_kernels::RegisterShapeKernels(ops);
}
