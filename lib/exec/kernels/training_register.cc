// RegisterTrainingKernels: the com.microsoft training and fused ops, the *Grad ops and the
// Dropout family (including ONNX Dropout in every opset), one registration call per file.
#include "exec/kernel.h"
#include "exec/kernels/training_util.h"

namespace memopt {

void RegisterTrainingKernels(KernelRegistry& r) {
  training::RegisterActivationKernels(r);
  training::RegisterSoftmaxGradKernels(r);
  training::RegisterNormGradKernels(r);
  training::RegisterLossGradKernels(r);
  training::RegisterShapeGradKernels(r);
  training::RegisterPoolGradKernels(r);
  training::RegisterAccumKernels(r);
}

}  // namespace memopt
