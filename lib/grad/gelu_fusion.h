// Pre-gradient GeluFusion (ort_training_ops.md §7): the erf form of GELU that exporters emit
// below ONNX opset 20,
//     y = Mul(Mul(x, Add(Erf(Div(x, sqrt(2))), 1)), 0.5)        (torch.onnx, F.gelu)
//     y = Mul(Mul(x, 0.5), Add(Erf(Div(x, sqrt(2))), 1))        (Hugging Face's hand-written gelu)
// (Mul by 1/sqrt(2) instead of Div, and either operand order, match too), becomes one
// com.microsoft::Gelu node, as ORTModule's pre-gradient optimization does. The backward then uses
// GeluGrad, and scan finds ORT's Gelu recompute clusters. Intermediate tensors must have a single
// consumer and must not be graph outputs; Constant nodes left without consumers are removed.
#pragma once

#include "ir/graph.h"

namespace memopt::grad {

/// Fuses every match in place (node ids are renumbered); returns the number of fused Gelus.
int FuseGelu(Graph& graph);

}  // namespace memopt::grad
