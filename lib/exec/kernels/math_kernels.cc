// RegisterMathKernels: the linear-algebra and neural-network kernels (matmul.cc, gemm.cc,
// conv.cc, conv_transpose.cc, pool.cc, norm.cc, layer_norm.cc, softmax.cc, loss.cc).
#include "exec/kernel.h"
#include "exec/kernels/math_util.h"

namespace memopt {

void RegisterMathKernels(KernelRegistry& r) {
  math::RegisterMatMulKernels(r);
  math::RegisterGemmKernels(r);
  math::RegisterConvKernels(r);
  math::RegisterConvTransposeKernels(r);
  math::RegisterPoolKernels(r);
  math::RegisterNormKernels(r);
  math::RegisterSoftmaxKernels(r);
  math::RegisterLossKernels(r);
}

}  // namespace memopt
