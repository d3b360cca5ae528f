// The Dropout family's decode: which inputs are data, bias and residual, whether the node runs in
// training mode, its ratio and mask kind, with one set of checks and error messages for every
// backend (the CPU kernels in dropout_cpu.cc, the CUDA wrappers in cuda/ops/dropout/dropout.cc).
// Tensors are read for shapes and types only (a backend passes Tensor::Meta views); the scalar
// inputs ratio and training_mode come through a reader, because a backend may have to copy them
// from its device first.
#pragma once

#include <functional>
#include <vector>

#include "exec/tensor.h"
#include "ir/graph.h"
#include "util/status.h"

namespace memopt::dropout {

// Errors (InvalidInput) carry no node name: a kernel passes the message to its context's Error.

/// What output 1 (the mask) holds: bool (true = keep), the data type (1 = keep, opset < 10), or
/// bits packed into uint32 words (bit i%32 of word i/32, 1 = keep).
enum class MaskKind { kBool, kData, kBitmask };

/// Element 0 of scalar input `i` as a double (bool as 0 or 1), or `def` when the input is absent
/// or empty. Called only for the scalars the node's mode needs.
using ScalarReader = std::function<Expected<double>(int i, double def)>;

/// Dropout (every opset), BitmaskDropout, BiasDropout, BitmaskBiasDropout:
/// output = (data [+ bias]) * keep / (1 - ratio) [+ residual].
struct DropoutPlan {
  int data = 0;
  int bias = -1;      ///< input index of the bias, -1 when absent
  int residual = -1;  ///< input index of the residual, -1 when absent
  bool training = false;
  float ratio = 0.0f;  ///< the ratio in effect: 0 outside training mode
  MaskKind mask = MaskKind::kBool;

  bool random() const { return ratio > 0.0f; }
};

/// `inputs` as the kernel sees them (nullptr where omitted). Checks that the bias is there for the
/// bias variants and broadcasts onto data, that the residual has data's shape, both with data's
/// type, and that the ratio is in [0, 1] when it is used.
Expected<DropoutPlan> DecodeDropout(const Node& node, const std::vector<const Tensor*>& inputs,
                                    const ScalarReader& scalar);

/// DropoutGrad(dy, mask: bool, ratio?, training_mode?) and BitmaskDropoutGrad(dy, mask: uint32, ...):
/// dx = mask ? dy / (1 - ratio) : 0. training_mode defaults to true for DropoutGrad and false for
/// BitmaskDropoutGrad; when false the scale is 1 (the forward did not scale). ORT's DropoutGrad
/// ignores training_mode; its BitmaskDropoutGrad honours it.
struct DropoutGradPlan {
  bool bitmask = false;
  float ratio = 0.0f;  ///< the ratio in effect: 0 outside training mode
};

/// Checks dy and the mask are present and the mask's type and size match dy.
Expected<DropoutGradPlan> DecodeDropoutGrad(const Node& node, const std::vector<const Tensor*>& inputs,
                                            const ScalarReader& scalar);

}  // namespace memopt::dropout
