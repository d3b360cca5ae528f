// PyTorch's parameters in an export of the torch.export-based exporter (torch.onnx.export of
// PyTorch 2.5+, the default since 2.9), read from what the export says of itself:
//
//   * the graph signature (GraphProto metadata `pkg.torch.export.ExportedProgram.graph_signature`:
//     `p_<..>: PARAMETER target='<name>'`, `b_<..>: BUFFER target='<name>'`, ...) names every
//     parameter and buffer;
//   * each node's `pkg.torch.onnx.fx_node` names the ATen call it came from and, among that call's
//     arguments, the parameters it reads (`%p_model_lm_head_weight`).
//
// The exporter's optimizer (on by default) rewrites parameters into other tensors, so a gradient
// of the graph as written is not the gradient of a PyTorch parameter. This pass undoes what it can
// before differentiating, and says what it cannot:
//
//   * a Linear weight folded into its transpose (a generated initializer `val_N` read by MatMul
//     whose call is `aten.linear(x, %p_..._weight)`): the parameter comes back under its own name
//     with its own layout, read through a Transpose node;
//   * parameters merged by value (fresh LayerNorm scales of 1, zero biases): each node's call names
//     the parameter it reads, so each parameter gets its own initializer (a copy of the merged one)
//     and its own gradient;
//   * BatchNormalization whose call ran in training mode (`_native_batch_norm_legit_functional`
//     with training=True) but which the exporter wrote in inference mode: training_mode=1 and the
//     running-statistics outputs, as PyTorch ran it;
//   * a training-mode BatchNorm folded into its Conv (weights rescaled by the running statistics):
//     no gradient of that export is PyTorch's. An error that says to export with optimize=False;
//   * a parameter folded into a constant some other way (e.g. position embeddings gathered at
//     constant positions): no gradient can reach it; it is listed in `unrecoverable`.
//
// Only PARAMETER tensors are trainable by default in such an export: buffers (running statistics,
// rotary caches) and the exporter's constants are not parameters of the PyTorch model.
#pragma once

#include <string>
#include <vector>

#include "io/model_loader.h"
#include "util/status.h"

namespace memopt::grad {

struct TorchParameterStats {
  bool has_signature = false;          ///< the export carries torch.export's graph signature
  std::vector<std::string> parameters;  ///< PARAMETER targets that are initializers after the pass
  std::vector<std::string> buffers;     ///< BUFFER targets (never trained by default)
  int restored_transposes = 0;          ///< Linear weights restored from a folded transpose
  int split_merged = 0;                 ///< parameters given back their own initializer
  int training_batch_norms = 0;         ///< BatchNormalization nodes put back in training mode
  int recurrent_parameters = 0;         ///< nn.LSTM/GRU/RNN parameters restored from folded W, R, B
  /// Parameters that are no initializer of the graph after the pass: folded into constants beyond
  /// repair (or never read by the model). They get no gradient.
  std::vector<std::string> unrecoverable;
};

/// Rewrites `model` as above (a no-op without a graph signature). Errors (kUnsupported) name the
/// node whose export cannot give PyTorch's gradients (a training-mode BatchNorm folded into a Conv).
Expected<TorchParameterStats> RestoreTorchParameters(Model& model);

/// The graph signature's inputs: placeholder name -> (kind, target), e.g.
/// "p_model_fc_weight" -> ("PARAMETER", "model.fc.weight"). Empty without a signature.
std::vector<std::pair<std::string, std::pair<std::string, std::string>>> ParseGraphSignature(
    const std::string& text);

/// The ATen call a node's fx_node metadata names ("aten.linear.default") and its top-level
/// arguments as written ("%x", "[16]", "True").
struct FxCall {
  std::string target;
  std::vector<std::string> args;
};
FxCall ParseFxNode(const std::string& text);

}  // namespace memopt::grad
