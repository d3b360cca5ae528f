// Comparisons (bool output), logical and bitwise ops, all with numpy broadcasting:
// Equal Less LessOrEqual Greater GreaterOrEqual, And Or Xor Not, BitwiseAnd/Or/Xor/Not, BitShift.

// The build uses -O2, whose "very cheap" vectorizer cost model skips loops with a runtime trip
// count; the elementwise loops here are meant to be vectorized, so use the dynamic model.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("vect-cost-model=dynamic")
#endif
#include <string>
#include <type_traits>

#include "exec/kernels/elementwise.h"
#include "ir/op_registry.h"

namespace memopt::elementwise {

namespace {

Status SameType(const KernelContext& ctx) {
  const DataType a = ctx.input(0).dtype();
  const DataType b = ctx.input(1).dtype();
  if (a == b) return Status::Ok();
  return ctx.Error("inputs have different types " + DataTypeName(a) + " and " + DataTypeName(b));
}

/// Bool output = f(a, b) on loaded values; strings are compared only when `strings` is set.
template <typename F>
Status Compare(KernelContext& ctx, bool strings, F f) {
  MEMOPT_ASSIGN_OR_RETURN(std::vector<int64_t> shape, BroadcastInputs(ctx, 2));
  MEMOPT_RETURN_IF_ERROR(SameType(ctx));
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  ctx.outputs[0] = Tensor::Uninitialized(DataType::kBool, shape);
  bool* out = ctx.outputs[0].data<bool>();
  if (a.dtype() == DataType::kString) {
    if (!strings) return UnsupportedType(a.dtype(), ctx.node->op_type);
    const auto& sa = a.strings();
    const auto& sb = b.strings();
    ForEachIndexed(shape, {BroadcastStrides(a.shape(), shape), BroadcastStrides(b.shape(), shape)},
                   [&](int64_t i, const int64_t* off) { out[i] = f(sa[off[0]], sb[off[1]]); });
    return Status::Ok();
  }
  return DispatchAll(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    Binary(a.data<T>(), a.shape(), b.data<T>(), b.shape(), out, shape,
                    [&f](T x, T z) -> bool { return f(Load(x), Load(z)); });
  });
}

/// Bool inputs and output.
template <typename F>
Status Logic(KernelContext& ctx, F f) {
  MEMOPT_ASSIGN_OR_RETURN(std::vector<int64_t> shape, BroadcastInputs(ctx, 2));
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  if (a.dtype() != DataType::kBool || b.dtype() != DataType::kBool) {
    return UnsupportedType(a.dtype() != DataType::kBool ? a.dtype() : b.dtype(), ctx.node->op_type);
  }
  ctx.outputs[0] = Tensor::Uninitialized(DataType::kBool, shape);
  Binary(a.data<bool>(), a.shape(), b.data<bool>(), b.shape(), ctx.outputs[0].data<bool>(), shape, f);
  return Status::Ok();
}

/// Integer inputs, output of the same type.
template <typename F>
Status Bitwise(KernelContext& ctx, F f) {
  MEMOPT_ASSIGN_OR_RETURN(std::vector<int64_t> shape, BroadcastInputs(ctx, 2));
  MEMOPT_RETURN_IF_ERROR(SameType(ctx));
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  ctx.outputs[0] = Tensor::Uninitialized(a.dtype(), shape);
  Tensor& y = ctx.outputs[0];
  return DispatchInt(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    Binary(a.data<T>(), a.shape(), b.data<T>(), b.shape(), y.data<T>(), shape,
                    [&f](T x, T z) { return static_cast<T>(f(x, z)); });
  });
}

void RegisterComparisons(OpRegistry& r) {
  r.SetCpuKernel("", "Equal", [](KernelContext& ctx) {
    return Compare(ctx, true, [](const auto& a, const auto& b) { return a == b; });
  }, AllTypes());
  const auto types = NumericAndBoolTypes();
  r.SetCpuKernel("", "Less", [](KernelContext& ctx) {
    return Compare(ctx, false, [](const auto& a, const auto& b) { return a < b; });
  }, types);
  r.SetCpuKernel("", "LessOrEqual", [](KernelContext& ctx) {
    return Compare(ctx, false, [](const auto& a, const auto& b) { return a <= b; });
  }, types);
  r.SetCpuKernel("", "Greater", [](KernelContext& ctx) {
    return Compare(ctx, false, [](const auto& a, const auto& b) { return a > b; });
  }, types);
  r.SetCpuKernel("", "GreaterOrEqual", [](KernelContext& ctx) {
    return Compare(ctx, false, [](const auto& a, const auto& b) { return a >= b; });
  }, types);
}

void RegisterLogic(OpRegistry& r) {
  const std::vector<DataType> b = {DataType::kBool};
  r.SetCpuKernel("", "And", [](KernelContext& ctx) { return Logic(ctx, [](bool x, bool y) { return x && y; }); }, b);
  r.SetCpuKernel("", "Or", [](KernelContext& ctx) { return Logic(ctx, [](bool x, bool y) { return x || y; }); }, b);
  r.SetCpuKernel("", "Xor", [](KernelContext& ctx) { return Logic(ctx, [](bool x, bool y) { return x != y; }); }, b);
  r.SetCpuKernel("", "Not", [](KernelContext& ctx) -> Status {
    MEMOPT_RETURN_IF_ERROR(RequireInputs(ctx, 1));
    const Tensor& x = ctx.input(0);
    if (x.dtype() != DataType::kBool) return UnsupportedType(x.dtype(), "Not");
    ctx.outputs[0] = Tensor(DataType::kBool, x.shape());
    MapUnary(x.data<bool>(), ctx.outputs[0].data<bool>(), x.numel(), 1, [](bool v) { return !v; });
    return Status::Ok();
  }, b);
}

void RegisterBitwise(OpRegistry& r) {
  const auto it = IntTypes();
  r.SetCpuKernel("", "BitwiseAnd", [](KernelContext& ctx) {
    return Bitwise(ctx, [](auto x, auto y) { return x & y; });
  }, it);
  r.SetCpuKernel("", "BitwiseOr", [](KernelContext& ctx) {
    return Bitwise(ctx, [](auto x, auto y) { return x | y; });
  }, it);
  r.SetCpuKernel("", "BitwiseXor", [](KernelContext& ctx) {
    return Bitwise(ctx, [](auto x, auto y) { return x ^ y; });
  }, it);
  r.SetCpuKernel("", "BitwiseNot", [](KernelContext& ctx) -> Status {
    MEMOPT_RETURN_IF_ERROR(RequireInputs(ctx, 1));
    const Tensor& x = ctx.input(0);
    ctx.outputs[0] = Tensor(x.dtype(), x.shape());
    Tensor& y = ctx.outputs[0];
    return DispatchInt(x.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      MapUnary(x.data<T>(), y.data<T>(), x.numel(), 1, [](T v) { return static_cast<T>(~v); });
    });
  }, it);
  // BitShift (direction LEFT/RIGHT); shifting by the bit width or more gives 0.
  r.SetCpuKernel("", "BitShift", [](KernelContext& ctx) -> Status {
    const std::string dir = ctx.node->GetString("direction", "");
    if (dir != "LEFT" && dir != "RIGHT") return ctx.Error("direction must be LEFT or RIGHT, got '" + dir + "'");
    const bool left = dir == "LEFT";
    return Bitwise(ctx, [left](auto x, auto s) {
      using T = decltype(x);
      using U = std::make_unsigned_t<T>;
      const U amount = static_cast<U>(s);
      if (amount >= sizeof(T) * 8) return T(0);
      return left ? static_cast<T>(static_cast<U>(x) << amount) : static_cast<T>(x >> amount);
    });
  }, it);
}

}  // namespace

static void RegisterCompareLogicKernels(OpRegistry& r) {
  RegisterComparisons(r);
  RegisterLogic(r);
  RegisterBitwise(r);
}

}  // namespace memopt::elementwise

MEMOPT_OPS(elementwise, compare_cpu) {
  memopt::elementwise::RegisterCompareLogicKernels(ops);
}
