// The built-in CUDA kernel registry: one explicit list, as exec/kernels/all_kernels.cc.
#include "cuda_kernel.h"

namespace memopt::cuda {

const CudaKernelRegistry& CudaKernelRegistry::Builtin() {
  static const CudaKernelRegistry registry = [] {
    CudaKernelRegistry r;
    RegisterElementwiseKernels(r);
    RegisterCastKernels(r);
    RegisterMatMulKernels(r);
    RegisterViewKernels(r);
    RegisterDataMovementKernels(r);
    RegisterSoftmaxKernels(r);
    RegisterNormKernels(r);
    RegisterDropoutKernels(r);
    return r;
  }();
  return registry;
}

}  // namespace memopt::cuda
