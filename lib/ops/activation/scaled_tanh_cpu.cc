// The CPU kernel of ScaledTanh (scaled_tanh.cc): y = alpha * tanh(beta * x) for the float types,
// computed in float for float16/bfloat16 as every elementwise kernel.
#include <cmath>

#include "exec/kernel.h"
#include "exec/kernels/elementwise.h"
#include "ir/op_registry.h"

namespace memopt {

namespace {

Status ScaledTanhCpu(KernelContext& ctx) {
  const float alpha = ctx.node->GetFloat("alpha", 1.0f);
  const float beta = ctx.node->GetFloat("beta", 1.0f);
  return elementwise::UnaryFloat(ctx, 8, [alpha, beta](auto x) {
    using C = decltype(x);
    return C(alpha) * std::tanh(C(beta) * x);
  });
}

}  // namespace
}  // namespace memopt

MEMOPT_OPS(activation, scaled_tanh_cpu) {
  ops.SetCpuKernel("", "ScaledTanh", memopt::ScaledTanhCpu, memopt::elementwise::FloatTypes());
}
