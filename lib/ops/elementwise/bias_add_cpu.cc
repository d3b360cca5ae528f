// The CPU kernel of com.microsoft BiasAdd (bias_add.cc): y = x + bias[c] + skip, row by row, in
// float for float16/bfloat16 (rounded once, as every elementwise kernel) and in double for double.
#include "exec/kernel.h"
#include "exec/kernels/kernel_util.h"
#include "exec/kernels/training_util.h"
#include "ir/op_registry.h"
#include "ops/elementwise/bias_add.h"

namespace memopt::bias_add {
namespace {

/// y = x + bias[c] + skip in C (float, or double for double), one row of C channels at a time.
template <typename C>
Status AddRows(const Tensor& x, const Tensor& bias, const Tensor& skip, Tensor& y, const BiasAddPlan& plan) {
  training::FloatIn<C> xs(x), bs(bias), ss(skip);
  training::FloatOut<C> ys(y);
  ParallelFor(plan.rows, plan.channels, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t base = r * plan.channels;
      for (int64_t c = 0; c < plan.channels; ++c) ys[base + c] = xs[base + c] + bs[c] + ss[base + c];
    }
  });
  ys.Commit();
  return Status::Ok();
}

Status BiasAddCpu(KernelContext& ctx) {
  for (int i = 0; i < 3; ++i) {
    if (!ctx.has_input(i)) return ctx.Error("input " + std::to_string(i) + " (X, bias, skip) is missing");
  }
  const Tensor& x = ctx.input(0);
  auto plan = DecodeBiasAdd(x, ctx.input(1), ctx.input(2));
  if (!plan.ok()) return ctx.Error(plan.status().message());
  ctx.outputs[0] = Tensor::Uninitialized(x.dtype(), x.shape());
  return training::DispatchCompute(ctx, x.dtype(), [&]<typename C>() {
    return AddRows<C>(x, ctx.input(1), ctx.input(2), ctx.outputs[0], *plan);
  });
}

}  // namespace
}  // namespace memopt::bias_add

MEMOPT_OPS(elementwise, bias_add_cpu) {
  ops.SetCpuKernel(memopt::kMicrosoftDomain, "BiasAdd", memopt::bias_add::BiasAddCpu, memopt::training::FloatTypes());
}
