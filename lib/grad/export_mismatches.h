// Signs that a forward export differentiates into other gradients than PyTorch's autograd gives
// the module it came from, found on the selected gradient paths before differentiating. `memopt
// grad` prints each as a warning; the gradients it builds are still those of the graph as written.
//
//  * A split tied weight: TorchScript writes a tied LM head (the embedding table reused as the
//    output projection) as the Gather table plus a transposed copy of it, a generated initializer
//    (`onnx::MatMul_123`) read by MatMul. Both are trainable and each gets its own gradient, where
//    PyTorch trains one tensor with their sum (the table's own gradient alone is far off).
//    Signature: an initializer read by MatMul whose shape is the transpose of a Gather table's and
//    whose values are that table transposed (compared when both hold at most
//    kMaxComparedTiedBytes; larger pairs with a generated name are reported as probable).
//  * An inference-mode BatchNormalization on the gradient path (training_mode 0 or absent): it
//    normalises with the running statistics given as inputs, so its gradients are those of frozen
//    statistics, not of PyTorch's training-mode BatchNorm. The current dynamo exporter writes a
//    training-mode BatchNorm2d this way. Nodes whose export metadata (`pkg.torch.onnx.fx_node`)
//    names an inference op (`_native_batch_norm_legit_no_training`) are left out: the model was
//    exported in eval mode; when it names a batch norm called with training=True, the warning
//    says the loss and gradients differ from PyTorch's.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "grad/grad_selection.h"
#include "io/model_loader.h"

namespace memopt::grad {

constexpr int64_t kMaxComparedTiedBytes = int64_t{256} << 20;

/// One warning per finding (each names the tensors or nodes and what to do), in graph order.
std::vector<std::string> FindExportMismatches(const Model& model, const GradSelection& selection);

}  // namespace memopt::grad
