// PyTorch's nn.LSTM / nn.GRU / nn.RNN parameters back from what the current exporter's optimizer
// folds them into. The export computes the ONNX op's W, R and B from the parameters (PyTorch keeps
// the gates in the order i, f, g, o (LSTM) and r, z, n (GRU); ONNX wants i, o, f, c and z, r, h;
// B joins b_ih and b_hh; directions stack), and the optimizer folds that into constants. Each
// parameter gets its own initializer again, in PyTorch's layout, and W, R and B are computed from
// them (Gather of the rows in ONNX's gate order, Concat, Unsqueeze), so the gradients reach
// PyTorch's names.
#pragma once

#include <string>
#include <vector>

#include "exec/initializer_reader.h"
#include "ir/graph.h"
#include "util/status.h"

namespace memopt::grad {

/// One layer's parameters as aten.lstm/gru/rnn list them: per direction weight_ih, weight_hh and,
/// with biases, bias_ih, bias_hh.
struct RecurrentLayerParameters {
  std::vector<std::string> names;
  bool has_biases = true;
};

/// Restores the parameters of node `n` (an RNN, GRU or LSTM) whose W, R, B inputs are constants
/// the exporter made from `layer`. Appends the nodes computing W, R, B to `new_nodes` (they read
/// only the new initializers). Returns how many parameters were restored (0 when an input is not
/// such a constant or its shape does not fit).
Expected<int> RestoreRecurrentWeights(Graph& g, InitializerReader& reader, NodeId n, const RecurrentLayerParameters& layer,
                                      std::vector<Node>& new_nodes);

}  // namespace memopt::grad
