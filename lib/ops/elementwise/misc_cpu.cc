// Clip (attribute form before opset 11, optional min/max inputs from 11) and Identity.
// ONNX Dropout, inference form included, is in ops/dropout.

// The build uses -O2, whose "very cheap" vectorizer cost model skips loops with a runtime trip
// count; the elementwise loops here are meant to be vectorized, so use the dynamic model.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("vect-cost-model=dynamic")
#endif
#include <limits>
#include <string>

#include "exec/kernels/elementwise.h"
#include "ir/op_registry.h"

namespace memopt::elementwise {

namespace {

Status ClipKernel(KernelContext& ctx) {
  MEMOPT_RETURN_IF_ERROR(RequireInputs(ctx, 1));
  const Tensor& x = ctx.input(0);
  for (int i = 1; i <= 2; ++i) {
    if (!ctx.has_input(i)) continue;
    const Tensor& bound = ctx.input(i);
    if (bound.numel() != 1) {
      return ctx.Error(std::string(i == 1 ? "min" : "max") + " must be a scalar, got " + bound.Describe());
    }
    if (bound.dtype() != x.dtype()) {
      return ctx.Error(std::string(i == 1 ? "min" : "max") + " has type " + DataTypeName(bound.dtype()) +
                       ", input has " + DataTypeName(x.dtype()));
    }
  }
  ctx.outputs[0] = Tensor(x.dtype(), x.shape());
  Tensor& y = ctx.outputs[0];
  const bool attr_form = ctx.node->since_version > 0 && ctx.node->since_version < 11;
  return DispatchNumeric(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    C lo = std::numeric_limits<C>::lowest();
    C hi = std::numeric_limits<C>::max();
    if (attr_form || ctx.node->HasAttr("min") || ctx.node->HasAttr("max")) {
      if (ctx.node->HasAttr("min")) lo = static_cast<C>(ctx.node->GetFloat("min", 0.0f));
      if (ctx.node->HasAttr("max")) hi = static_cast<C>(ctx.node->GetFloat("max", 0.0f));
    }
    if (ctx.has_input(1)) lo = Load(ctx.input(1).data<T>()[0]);
    if (ctx.has_input(2)) hi = Load(ctx.input(2).data<T>()[0]);
    // numpy.clip semantics: min(max(x, lo), hi), so hi wins when lo > hi.
    MapUnary(x.data<T>(), y.data<T>(), x.numel(), 1, [lo, hi](C v) {
      const C a = v < lo ? lo : v;
      return a > hi ? hi : a;
    });
  });
}

/// Identity shares the input's buffer (tensors are immutable once produced).
Status IdentityKernel(KernelContext& ctx) {
  MEMOPT_RETURN_IF_ERROR(RequireInputs(ctx, 1));
  ctx.outputs[0] = ctx.input(0);
  return Status::Ok();
}

}  // namespace

static void RegisterMiscKernels(OpRegistry& r) {
  r.SetCpuKernel("", "Clip", ClipKernel, NumericTypes());
  r.SetCpuKernel("", "Identity", IdentityKernel, AllTypes());
}

}  // namespace memopt::elementwise

MEMOPT_OPS(elementwise, misc_cpu) {
  memopt::elementwise::RegisterMiscKernels(ops);
}
