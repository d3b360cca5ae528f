// What to differentiate: the loss (or every float output), the trainable tensors, and which
// nodes lie on a gradient path (ort_training_ops.md §5.1): forward-reachable from a trainable
// tensor and backward-reachable from a differentiated output, through float tensors only and
// never through stop edges (shape / index / mask inputs). Tensors a node's subgraphs read from the
// outer scope count as its inputs.
#pragma once

#include <string>
#include <vector>

#include "grad/grad_builder.h"
#include "ir/graph.h"

namespace memopt::grad {

struct GradSelection {
  std::string loss;                  ///< "" when every differentiable output is seeded
  std::vector<ValueId> yield_inputs;  ///< the forward graph outputs, in order
  std::vector<int> seeded;           ///< indices into yield_inputs that get an incoming gradient
  std::vector<ValueId> trainable;    ///< trainable graph inputs (input order), then initializers
  std::vector<std::string> unused_trainable;  ///< no path of any kind to a differentiated output
  /// Paths to a differentiated output, but each through an integer, boolean or string value or an
  /// index input (a stop edge): they affect the outputs, yet get no gradient.
  std::vector<std::string> nondifferentiable_trainable;
  std::vector<char> forward_reach;   ///< per value: depends on a trainable tensor (float path)
  std::vector<char> backward_need;   ///< per value: a seeded output depends on it (float path)
  std::vector<char> differentiated;  ///< per node
  std::vector<NodeId> topo_order;    ///< forward nodes, topological (node-id order where free)
};

/// True when `t` carries gradients: float, double, float16, bfloat16.
bool CarriesGradient(const Graph& graph, ValueId v);
/// Whether input `i` of `node` is a stop edge (its rule's list).
bool IsStopEdge(const Node& node, int i);

/// Tensors of `graph` that the subgraphs of `node` (If branches, Loop and Scan bodies, at any
/// depth) read from the outer scope, in name order. They are inputs of `node` for the gradient
/// paths: a trainable tensor read inside an If makes the If lie on the path.
std::vector<ValueId> SubgraphOuterInputs(const Graph& graph, const Node& node);


/// Chooses loss, seeds and trainable tensors and computes the reachability sets.
/// `parameters`, when given, are the initializers trainable by default (the PyTorch parameters of
/// a torch.export-based export); otherwise every float initializer is.
Expected<GradSelection> SelectGradients(const Graph& graph, const GradOptions& options,
                                        const std::vector<std::string>* parameters = nullptr);

}  // namespace memopt::grad
