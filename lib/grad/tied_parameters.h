// Parameters that the export merged into one initializer.
//
// torch.onnx.export with the model in eval mode deduplicates initializers by value: parameters
// with equal contents become one initializer. In a freshly initialized model every LayerNorm
// weight is all ones and every bias all zeros, so the LayerNorms of all layers end up reading
// the same two initializers, and a training graph built from that export trains them as one
// tensor (their gradients summed): the layers' parameters are tied.
//
// The signature: one float initializer read as a parameter (the weight, scale or bias input of a
// LayerNormalization, BatchNormalization, Conv, Gemm, MatMul, ..., or the bias Add after a
// MatMul / Gemm / Conv) by nodes of two or more different modules. The module of a node is its
// name up to the last '/', as torch.onnx names nodes ("/h.0/ln_1/LayerNormalization" is in
// "/h.0/ln_1"); a name without '/' is a module of its own. A module called twice reads its
// parameter from one scope, and a tied embedding is read by Gather, which is no parameter slot:
// neither is reported.
#pragma once

#include <string>
#include <vector>

#include "grad/grad_builder.h"
#include "ir/graph.h"

namespace memopt::grad {

/// The initializers among `candidates` (value ids) that look merged, in `candidates` order.
std::vector<TiedParameter> FindTiedParameters(const Graph& graph, const std::vector<ValueId>& candidates);

}  // namespace memopt::grad
