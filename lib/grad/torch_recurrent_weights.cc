#include "grad/torch_recurrent_weights.h"

#include <cstring>

#include "grad/owned_initializer.h"

namespace memopt::grad {
namespace {

/// ONNX's gate block j holds PyTorch's block order[j].
std::vector<int64_t> TorchBlockOfOnnxBlock(const std::string& op) {
  if (op == "LSTM") return {0, 3, 1, 2};  // i o f c <- i f g o
  if (op == "GRU") return {1, 0, 2};      // z r h <- r z n
  return {0};
}

class LayerRestorer {
 public:
  LayerRestorer(Graph& g, InitializerReader& reader, NodeId n, const RecurrentLayerParameters& layer,
                std::vector<Node>& nodes)
      : g_(g), reader_(reader), n_(n), layer_(layer), nodes_(nodes) {}

  Expected<int> Run() {
    const Node& node = g_.nodes[n_];
    dirs_ = node.GetString("direction", "forward") == "bidirectional" ? 2 : 1;
    per_dir_ = layer_.has_biases ? 4 : 2;
    if (static_cast<int64_t>(layer_.names.size()) != dirs_ * per_dir_) return 0;
    for (const std::string& p : layer_.names) {
      if (g_.FindValue(p) != kNone) return 0;  // read directly: nothing was folded
    }
    blocks_ = TorchBlockOfOnnxBlock(node.op_type);
    int restored = 0;
    for (int slot : {1, 2, 3}) {
      if (slot == 3 && !layer_.has_biases) break;
      const ValueId v = slot < static_cast<int>(node.inputs.size()) ? node.inputs[slot] : kNone;
      if (v == kNone || !g_.value(v).initializer || g_.value(v).initializer->is_sparse) return restored;
      MEMOPT_ASSIGN_OR_RETURN(int count, RestoreInput(v, slot));
      restored += count;
    }
    return restored;
  }

 private:
  /// The row of a PyTorch parameter that ONNX row `row` (of G*H) comes from.
  int64_t TorchRow(int64_t row, int64_t hidden) const { return blocks_[row / hidden] * hidden + row % hidden; }

  /// A parameter of `rows` x `cols` (cols 0: 1-D) from rows [first, first + rows) of `folded`'s
  /// direction `d`, in PyTorch's gate order.
  Expected<ValueId> Parameter(const Tensor& folded, int64_t d, int64_t first, int64_t rows, int64_t cols,
                              const std::string& name, uint64_t order) {
    std::vector<int64_t> shape = {rows};
    if (cols > 0) shape.push_back(cols);
    MEMOPT_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(folded.dtype(), shape, "parameter '" + name + "'"));
    const int64_t row_bytes = std::max<int64_t>(cols, 1) * ElemByteSize(folded.dtype());
    const int64_t hidden = rows / static_cast<int64_t>(blocks_.size());
    const auto* src = static_cast<const char*>(folded.raw()) + (d * folded.shape()[1] + first) * row_bytes;
    auto* dst = static_cast<char*>(t.raw());
    for (int64_t r = 0; r < rows; ++r) std::memcpy(dst + TorchRow(r, hidden) * row_bytes, src + r * row_bytes, row_bytes);
    return AddOwnedInitializer(g_, name, t, order);
  }

  /// Gather(parameter, ONNX's row order).
  ValueId InOnnxOrder(ValueId parameter, int64_t rows) {
    const int64_t hidden = rows / static_cast<int64_t>(blocks_.size());
    std::vector<int64_t> index(static_cast<size_t>(rows));
    for (int64_t r = 0; r < rows; ++r) index[r] = TorchRow(r, hidden);
    const std::string base = g_.value(parameter).name + "/onnx_gate_order";
    const ValueId idx = Int64Constant(g_, base + "_index", index, nodes_);
    const ValueId out = g_.GetOrAddValue(FreshName(g_, base));
    Node gather = MakeOnnxNode(g_, g_.value(out).name, "Gather", {parameter, idx}, {out});
    nodes_.push_back(std::move(gather));
    return out;
  }

  /// Concat (axis 0) or Unsqueeze (axes [0]) of `inputs` into `out` (a new value when kNone).
  ValueId Joined(const std::string& op, std::vector<ValueId> inputs, const std::string& base, ValueId out = kNone) {
    if (out == kNone) out = g_.GetOrAddValue(FreshName(g_, base));
    const bool unsqueeze = op == "Unsqueeze";
    const bool axes_input = unsqueeze && g_.OpsetVersion("") >= 13;
    if (axes_input) inputs.push_back(Int64Constant(g_, base + "_axes", {0}, nodes_));
    Node node = MakeOnnxNode(g_, g_.value(out).name, op, std::move(inputs), {out});
    if (!axes_input) {
      auto* attr = node.proto.add_attribute();
      attr->set_name(unsqueeze ? "axes" : "axis");
      attr->set_type(unsqueeze ? onnx::AttributeProto::INTS : onnx::AttributeProto::INT);
      if (unsqueeze) attr->add_ints(0);
      else attr->set_i(0);
    }
    nodes_.push_back(std::move(node));
    return out;
  }

  /// W (slot 1), R (slot 2) or B (slot 3) from its parameters; returns how many were made.
  Expected<int> RestoreInput(ValueId v, int slot) {
    MEMOPT_ASSIGN_OR_RETURN(Tensor folded, reader_.Read(v));
    const int64_t gates = static_cast<int64_t>(blocks_.size());
    const bool bias = slot == 3;
    if (folded.rank() != (bias ? 2 : 3) || folded.shape()[0] != dirs_ || folded.shape()[1] % (bias ? 2 * gates : gates)) {
      return 0;
    }
    const int64_t rows = bias ? folded.shape()[1] / 2 : folded.shape()[1];
    const int64_t cols = bias ? 0 : folded.shape()[2];
    const uint64_t order = g_.value(v).initializer->file_offset;
    const std::string name = g_.value(v).name;  // a copy: new values move the graph's value array
    std::vector<ValueId> per_dir;
    int made = 0;
    for (int64_t d = 0; d < dirs_; ++d) {
      const auto& names = layer_.names;
      const size_t first = static_cast<size_t>(d * per_dir_);
      ValueId joined;
      if (!bias) {
        MEMOPT_ASSIGN_OR_RETURN(ValueId p, Parameter(folded, d, 0, rows, cols, names[first + slot - 1], order));
        joined = InOnnxOrder(p, rows);
        made += 1;
      } else {
        MEMOPT_ASSIGN_OR_RETURN(ValueId b_ih, Parameter(folded, d, 0, rows, 0, names[first + 2], order));
        MEMOPT_ASSIGN_OR_RETURN(ValueId b_hh, Parameter(folded, d, rows, rows, 0, names[first + 3], order));
        joined = Joined("Concat", {InOnnxOrder(b_ih, rows), InOnnxOrder(b_hh, rows)}, name + "/direction");
        made += 2;
      }
      per_dir.push_back(Joined("Unsqueeze", {joined}, name + "/unsqueezed", dirs_ == 1 ? v : kNone));
    }
    if (dirs_ == 2) Joined("Concat", per_dir, name, v);
    g_.value(v).initializer.reset();  // now computed (the writer drops the file's copy)
    return made;
  }

  Graph& g_;
  InitializerReader& reader_;
  NodeId n_;
  const RecurrentLayerParameters& layer_;
  std::vector<Node>& nodes_;
  int64_t dirs_ = 1, per_dir_ = 4;
  std::vector<int64_t> blocks_;
};

}  // namespace

Expected<int> RestoreRecurrentWeights(Graph& g, InitializerReader& reader, NodeId n, const RecurrentLayerParameters& layer,
                                      std::vector<Node>& new_nodes) {
  return LayerRestorer(g, reader, n, layer, new_nodes).Run();
}

}  // namespace memopt::grad
