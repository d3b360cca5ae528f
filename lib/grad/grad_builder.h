// memopt grad: builds the backward pass of a forward ONNX model and lays the result out the way
// ONNX Runtime's ORTModule does (docs/grad.md, ../shared/reference/ort_training_ops.md §5, §6, §8):
//
//   forward nodes in topological order (plus the few outputs the gradient ops need: Dropout masks, MaxPool indices,
//   LayerNormalization mean / inv_std_dev, SoftmaxCrossEntropyLoss log_prob, and Shape nodes for
//   symbolic shapes the backward needs), one com.microsoft::YieldOp, backward nodes.
//
// The YieldOp takes every graph output of the forward model; its outputs are the incoming
// gradients `<output>_grad` of the differentiable ones (the loss only, when there is a loss).
// Gradient tensors are named `<tensor>_grad`, partial gradients `<tensor>_grad_<k>` summed by
// `AccumulateGrad_<tensor>_grad`, gradient nodes `<forward node name>_Grad/...`. The graph
// outputs are the loss (when there is one), then `<input>_grad` for trainable graph inputs, then
// `<initializer>_grad` for every trainable initializer, in initializer order.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "grad/torch_parameters.h"
#include "io/model_loader.h"
#include "ir/op_key.h"
#include "util/status.h"

namespace memopt {

struct GradOptions {
  /// Graph output to differentiate. Empty: the only scalar float output; when no output is a
  /// scalar, every float output gets an incoming gradient (ORTModule's convention).
  std::string loss;
  /// ECMAScript regex searched in tensor names (anchor with ^...$ for whole names). Empty: every
  /// float initializer is trainable. Graph inputs are trainable only when this names them.
  std::string trainable;
  /// ECMAScript regex of tensors that get no gradient (applied after `trainable`).
  std::string frozen;
  /// Fuse the erf form of GELU into com.microsoft::Gelu first (ORTModule's pre-gradient
  /// GeluFusion; gelu_fusion.h), so that the backward uses GeluGrad.
  bool fuse_gelu = true;
};

/// One initializer that looks like several parameters merged by the export (an eval-mode
/// torch.onnx.export deduplicates equal initializers): read as a weight, scale or bias by nodes
/// of different modules, so training ties them (grad/tied_parameters.h, docs/grad.md).
struct TiedParameter {
  std::string initializer;
  std::vector<std::string> nodes;  ///< the nodes reading it as a parameter, in node order
  int modules = 0;                 ///< distinct modules among them (name up to the last '/')
};

struct GradResult {
  /// The training model. Initializers are those of the input model (their bytes are never read);
  /// nodes are renumbered in the layout above; shapes are inferred.
  Model model;
  /// The differentiated loss; "" when every differentiable output gets an incoming gradient.
  std::string loss;
  /// Forward outputs whose gradient comes in through the YieldOp (`<name>_grad`), in order.
  std::vector<std::string> seeded_outputs;
  /// Tensors whose `<name>_grad` is a graph output, in graph-output order.
  std::vector<std::string> gradients;
  /// Trainable tensors the differentiated outputs do not depend on (no gradient is produced).
  /// Tensors read only through stop edges (BatchNormalization running statistics, a Pow exponent,
  /// Clip bounds) are not listed: they are not parameters.
  std::vector<std::string> unused_trainable;
  /// Trainable tensors the differentiated outputs depend on only through integer, boolean or string
  /// values or index inputs (e.g. a weight cast to int64): no gradient flows back to them.
  std::vector<std::string> nondifferentiable_trainable;
  /// Trainable initializers that several modules read as a parameter: probably parameters with
  /// equal values that the export merged; they are trained as one tensor.
  std::vector<TiedParameter> tied_parameters;
  /// Where the export differentiates into other gradients than PyTorch's (a tied weight split
  /// into a transposed copy, inference-mode BatchNorm): one warning each (grad/export_mismatches.h).
  std::vector<std::string> export_mismatches;
  /// Each backward node a gradient rule emitted (by name) -> the forward op whose rule emitted it
  /// (e.g. the Sigmoid of Softplus's gradient -> Softplus); for the backends' coverage checks.
  std::map<std::string, OpKey> emitted_for;
  /// What the export's PyTorch metadata said and what was restored from it (grad/torch_parameters.h).
  grad::TorchParameterStats torch_parameters;
  int fused_gelu = 0;  ///< GELU patterns fused before differentiating
  NodeId yield_node = kNone;
  /// Values with ids from here on were created by grad (the writer declares them in value_info).
  ValueId first_new_value = 0;
  int forward_nodes = 0;   ///< nodes before the YieldOp (including added Shape nodes)
  int backward_nodes = 0;  ///< nodes after the YieldOp
  /// Non-fatal notes for the user (e.g. shape inference gaps in the training graph).
  std::vector<std::string> warnings;
};

/// Builds the training graph of `forward`. Errors: kInvalidInput for a bad --loss or regex, or
/// a model that already has a backward pass; kUnsupported listing every op on the gradient path
/// without a gradient rule (op and node names).
Expected<GradResult> BuildGradientGraph(const Model& forward, const GradOptions& options = {});

/// Ops with a gradient rule, "op" or "domain::op", sorted (docs, --help).
std::vector<std::string> GradientOps();

}  // namespace memopt
