// Symbolic shape and type inference over the analysis IR, for standard ONNX ops and the
// com.microsoft training/fused ops, with value propagation through shape arithmetic
// (Shape -> Gather -> Concat -> Reshape keeps reshaped activations symbolic).
//
// Inferred results refine what the model declares (graph inputs, value_info, outputs): an
// inferred dim replaces a declared unknown one; a declared concrete or named dim is kept when
// inference cannot do better. Dims that stay unresolved become fresh symbols `unk__<N>`, and
// each is reported with the node that produced it.
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"
#include "util/status.h"

namespace memopt {

struct ShapeInferenceOptions {
  /// Use the model's declared value_info/output shapes where inference cannot resolve a dim.
  bool use_declared_shapes = true;
};

/// One thing inference could not resolve, named by node so the user can find it.
struct ShapeDiagnostic {
  NodeId node = kNone;
  std::string tensor;
  std::string message;  ///< e.g. "no shape rule for op 'Foo' (domain 'x.y')", "dim 2 unresolved"
};

struct ShapeInferenceStats {
  int nodes_visited = 0;
  int values_with_shape = 0;
  int values_without_shape = 0;
  std::vector<ShapeDiagnostic> diagnostics;  ///< in node order
  std::vector<std::string> ops_without_rule;  ///< "domain::op" sorted, unique
};

/// Infers every value's TensorInfo (and known_values for small int tensors). Fails only on
/// contradictions that make the model invalid (e.g. a cycle, incompatible matmul dims),
/// naming the node.
Expected<ShapeInferenceStats> InferShapes(Graph& graph, const ShapeInferenceOptions& options = {});

}  // namespace memopt
