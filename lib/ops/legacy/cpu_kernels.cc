// The CPU kernels of the op families that have not moved to lib/ops/<family> yet: their
// exec/kernels/*.cc registration functions, copied into the op registry. A family that moves
// registers its kernels in its own op file and leaves this list.
#include "exec/kernel.h"
#include "ir/op_registry.h"

MEMOPT_OPS(legacy, cpu_kernels) {
  memopt::KernelRegistry r;
  memopt::RegisterYieldOpKernel(r);
  memopt::RegisterElementwiseKernels(r);
  memopt::RegisterReduceKernels(r);
  memopt::RegisterTensorKernels(r);
  memopt::RegisterMathKernels(r);
  memopt::RegisterTrainingKernels(r);
  memopt::RegisterAtenKernels(r);
  for (const auto& [key, info] : r.entries()) ops.SetCpuKernel(key.first, key.second, info);
}
