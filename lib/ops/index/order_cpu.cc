// Ops that walk one axis in order: TopK (largest/smallest, ties broken by the lower index) and
// CumSum (exclusive, reverse).
#include <algorithm>
#include <cmath>

#include "exec/kernels/kernel_util.h"
#include "exec/kernels/tensor_common.h"
#include "ir/op_registry.h"

namespace memopt::tensor_kernels {
namespace {

Status TopKKernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  int64_t k = 0;
  if (ctx.has_input(1)) {
    MEMOPT_ASSIGN_OR_RETURN(k, ReadIntScalar(ctx, 1, "K"));
  } else {
    k = ctx.node->GetInt("k", -1);  // TopK-1
  }
  MEMOPT_ASSIGN_OR_RETURN(int64_t axis, CheckedAxis(ctx, ctx.node->GetInt("axis", -1), x.rank()));
  const int64_t dim = x.dim(axis);
  if (k < 0 || k > dim) {
    return ctx.Error("K = " + std::to_string(k) + " is out of range for axis " + std::to_string(axis) + " of " +
                     x.Describe());
  }
  const bool largest = ctx.node->GetInt("largest", 1) != 0;
  std::vector<int64_t> shape = x.shape();
  shape[axis] = k;
  Tensor values(x.dtype(), shape);
  Tensor indices(DataType::kInt64, shape);
  const int64_t outer = ProductOf(x.shape(), 0, axis);
  const int64_t inner = ProductOf(x.shape(), axis + 1, x.rank());
  MEMOPT_RETURN_IF_ERROR(DispatchNumeric(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    const T* in = x.data<T>();
    T* vo = values.data<T>();
    int64_t* io = indices.data<int64_t>();
    // NaN counts as larger than every number (so it comes first for largest, last for smallest).
    auto greater = [](C a, C b) {
      if constexpr (std::is_floating_point_v<C>) {
        if (std::isnan(a)) return !std::isnan(b);
        if (std::isnan(b)) return false;
      }
      return a > b;
    };
    std::vector<std::pair<C, int64_t>> items(static_cast<size_t>(dim));
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        const int64_t base = o * dim * inner + i;
        for (int64_t j = 0; j < dim; ++j) items[j] = {Load(in[base + j * inner]), j};
        auto cmp = [&](const std::pair<C, int64_t>& a, const std::pair<C, int64_t>& b) {
          const bool before = largest ? greater(a.first, b.first) : greater(b.first, a.first);
          const bool after = largest ? greater(b.first, a.first) : greater(a.first, b.first);
          if (before || after) return before;
          return a.second < b.second;
        };
        std::partial_sort(items.begin(), items.begin() + k, items.end(), cmp);
        const int64_t obase = o * k * inner + i;
        for (int64_t j = 0; j < k; ++j) {
          vo[obase + j * inner] = in[base + items[j].second * inner];
          io[obase + j * inner] = items[j].second;
        }
      }
    }
  }));
  ctx.outputs[0] = std::move(values);
  if (ctx.outputs.size() > 1) ctx.outputs[1] = std::move(indices);
  return Status::Ok();
}

Status CumSumKernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  MEMOPT_ASSIGN_OR_RETURN(int64_t axis_raw, ReadIntScalar(ctx, 1, "axis"));
  MEMOPT_ASSIGN_OR_RETURN(int64_t axis, CheckedAxis(ctx, axis_raw, x.rank()));
  const bool exclusive = ctx.node->GetInt("exclusive", 0) != 0;
  const bool reverse = ctx.node->GetInt("reverse", 0) != 0;
  Tensor out(x.dtype(), x.shape());
  const int64_t dim = x.dim(axis);
  const int64_t outer = ProductOf(x.shape(), 0, axis);
  const int64_t inner = ProductOf(x.shape(), axis + 1, x.rank());
  MEMOPT_RETURN_IF_ERROR(DispatchNumeric(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    const T* in = x.data<T>();
    T* o = out.data<T>();
    std::vector<C> acc(static_cast<size_t>(inner));
    for (int64_t b = 0; b < outer; ++b) {
      std::fill(acc.begin(), acc.end(), C(0));
      for (int64_t s = 0; s < dim; ++s) {
        const int64_t j = reverse ? dim - 1 - s : s;
        const int64_t row = (b * dim + j) * inner;
        for (int64_t i = 0; i < inner; ++i) {
          const C v = Load(in[row + i]);
          if (exclusive) {
            o[row + i] = StoreAs<T>(acc[i]);
            acc[i] = static_cast<C>(acc[i] + v);
          } else {
            acc[i] = static_cast<C>(acc[i] + v);
            o[row + i] = StoreAs<T>(acc[i]);
          }
        }
      }
    }
  }));
  ctx.outputs[0] = std::move(out);
  return Status::Ok();
}

}  // namespace

static void RegisterOrderKernels(OpRegistry& r) {
  const std::vector<DataType> numeric = {DataType::kFloat, DataType::kDouble, DataType::kFloat16, DataType::kBfloat16,
                                         DataType::kInt8,  DataType::kUint8,  DataType::kInt16,   DataType::kUint16,
                                         DataType::kInt32, DataType::kUint32, DataType::kInt64,   DataType::kUint64};
  r.SetCpuKernel("", "TopK", TopKKernel, numeric);
  r.SetCpuKernel("", "CumSum", CumSumKernel, numeric);
}

}  // namespace memopt::tensor_kernels

MEMOPT_OPS(index, order_cpu) {
  memopt::tensor_kernels::RegisterOrderKernels(ops);
}
