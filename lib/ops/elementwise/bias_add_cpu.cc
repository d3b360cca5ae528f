// The CPU kernel of com.microsoft BiasAdd (bias_add.cc): y = x + bias[c] + skip, row by row, in
// float for float16/bfloat16 (rounded once, as every elementwise kernel) and in double for double.
#include "exec/kernel.h"
#include "exec/kernels/kernel_util.h"
#include "exec/kernels/training_util.h"
#include "ir/op_registry.h"
#include "ops/elementwise/bias_add.h"

namespace memopt::bias_add {
namespace {

/// y = x + bias[c] + skip in C (float, or double for double), one row of C channels at a time
/// (16-bit rows converted and stored a row at a time).
template <typename C>
Status AddRows(const Tensor& x, const Tensor& bias, const Tensor& skip, Tensor& y, const BiasAddPlan& plan) {
  std::vector<C> bias_values(static_cast<size_t>(plan.channels));
  ConvertRange(bias, 0, plan.channels, bias_values.data());
  const size_t row = static_cast<size_t>(plan.channels);
  ParallelFor(plan.rows, plan.channels, [&](int64_t begin, int64_t end) {
    ChunkBuffers<C> buf;
    for (int64_t r = begin; r < end; ++r) {
      const int64_t base = r * plan.channels;
      const C* xs = ReadRange(x, base, plan.channels, buf, 0);
      const C* ss = ReadRange(skip, base, plan.channels, buf, 1);
      C* ys = WriteRange(y, base, row, buf, 2);
      for (int64_t c = 0; c < plan.channels; ++c) ys[c] = xs[c] + bias_values[static_cast<size_t>(c)] + ss[c];
      CommitRange(ys, plan.channels, y, base);
    }
  });
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
