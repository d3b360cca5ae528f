// The interface between the gradient builder and the per-op gradient rules (lib/ops/<family>/, registered with OpRegistry::SetGrad).
//
// GraphEmitter appends nodes to the graph being built, keeping Node::proto in sync, and records
// where each new node goes in the final layout (the forward section for Shape nodes of forward
// tensors, the backward section otherwise). NodeGrad is what one rule sees of one forward node:
// its inputs and outputs I(i) / O(j), the incoming gradients GO(j), which input gradients GI(i) it
// must produce, and helpers that emit opset-correct nodes (ReduceSum / Squeeze / Unsqueeze with
// axes as attributes before opset 13 and as inputs from 13), constants, shapes and broadcast
// reductions (static when the shapes decide it, Shape + BroadcastGradientArgs otherwise).
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/op_def.h"
#include "util/status.h"

namespace memopt::grad {

inline const std::string kMsDomain{kMicrosoftDomain};

/// Attribute builders.
onnx::AttributeProto AttrInt(const std::string& name, int64_t v);
onnx::AttributeProto AttrFloat(const std::string& name, float v);
onnx::AttributeProto AttrInts(const std::string& name, const std::vector<int64_t>& v);
onnx::AttributeProto AttrString(const std::string& name, const std::string& v);
onnx::AttributeProto AttrTensor(const std::string& name, const onnx::TensorProto& t);

/// A tensor of `dtype` (float types or int64/int32/bool) with `dims` and `values` (converted).
onnx::TensorProto MakeTensor(DataType dtype, const std::vector<int64_t>& dims, const std::vector<double>& values);

/// True for the element types gradients flow through (float, double, float16, bfloat16).
bool IsDifferentiableType(DataType t);

/// All dims literal: their values.
std::optional<std::vector<int64_t>> LiteralShape(const std::optional<Shape>& shape);

class GraphEmitter {
 public:
  explicit GraphEmitter(Graph& graph);

  /// A value name not used in the graph yet, made from `base` ("base", "base_1", ...), reserved.
  std::string UniqueName(const std::string& base);
  /// Reserves `name` exactly; false when it is already taken.
  bool Reserve(const std::string& name);

  /// Appends a node. Empty input/output names are omitted optional slots. The node goes to the
  /// backward section unless `after_forward` is set: kNone = start of the forward section,
  /// otherwise right after that forward node.
  NodeId Add(const std::string& name, const std::string& op, const std::string& domain,
             const std::vector<std::string>& inputs, const std::vector<std::string>& outputs,
             const std::vector<onnx::AttributeProto>& attrs = {},
             std::optional<NodeId> after_forward = std::nullopt);

  /// Records the elem type / shape of a new value (refined by shape inference at the end).
  void SetInfo(const std::string& name, DataType dtype, std::optional<Shape> shape);

  Graph& graph() { return graph_; }
  const Graph& graph() const { return graph_; }
  /// Nodes of the original graph (ids below this are forward nodes).
  NodeId original_nodes() const { return original_nodes_; }

  /// The final node order: the original nodes in `forward_order` (a topological order) with the
  /// added forward nodes after their anchors, then `yield`, then the backward nodes in the order
  /// they were added.
  std::vector<NodeId> FinalOrder(const std::vector<NodeId>& forward_order, NodeId yield) const;

 private:
  Graph& graph_;
  NodeId original_nodes_;
  std::set<std::string> names_;  ///< value names in use or reserved
  std::map<NodeId, std::vector<NodeId>> after_;  ///< forward anchor (kNone = start) -> added nodes
  std::vector<NodeId> backward_;
  std::set<NodeId> forward_added_;
};

/// Shared state of one gradient build that rules reach through NodeGrad.
struct GradShared {
  GraphEmitter* emitter = nullptr;
  int64_t onnx_opset = 0;
  std::map<std::string, std::string> shared_constants;  ///< "One_1" -> value name
  std::map<std::string, std::string> shape_values;      ///< tensor -> int64 shape value
  /// Each node a gradient rule emitted (by name) -> the forward op whose rule emitted it.
  std::map<std::string, OpKey> emitted_for;
};

/// What one gradient rule sees of one forward node.
class NodeGrad {
 public:
  NodeGrad(GradShared& shared, const Node& node, std::string prefix, std::vector<std::string> go,
           std::vector<std::string> gi_names);

  const Node& node() const { return node_; }
  int since_version() const { return node_.since_version; }
  int64_t opset() const { return shared_.onnx_opset; }
  const std::string& prefix() const { return prefix_; }

  int num_inputs() const { return static_cast<int>(node_.inputs.size()); }
  int num_outputs() const { return static_cast<int>(node_.outputs.size()); }
  /// Forward input / output name; "" when absent.
  std::string I(int i) const;
  std::string O(int j) const;
  /// Incoming gradient of output j; "" when that output gets none.
  const std::string& GO(int j) const;
  bool HasGO(int j) const { return !GO(j).empty(); }
  /// Whether the gradient of input i is wanted, and the name the rule must write it to.
  bool NeedGI(int i) const;
  const std::string& GI(int i) const;

  // Tensor facts (forward and new values).
  DataType Dtype(const std::string& name) const;
  std::optional<Shape> ShapeOf(const std::string& name) const;
  std::optional<int64_t> Rank(const std::string& name) const;
  /// Known int64 values of a small tensor (constants, shape arithmetic).
  std::optional<std::vector<int64_t>> IntValues(const std::string& name) const;

  // Emitting. Node names are "<prefix><op>_<k>"; Tmp names "<prefix><suffix>" (made unique).
  std::string Tmp(const std::string& suffix);
  /// GI(i) when that gradient is wanted; else a throw-away Tmp(suffix) when the emitted op must
  /// produce the output anyway (`required`), else "" (an optional output slot left out).
  std::string GIOrTmp(int i, bool required, const std::string& suffix);
  void Emit(const std::string& op, const std::vector<std::string>& inputs, const std::vector<std::string>& outputs,
            const std::vector<onnx::AttributeProto>& attrs = {}, const std::string& domain = "");
  /// Emits a one-output node writing a new temporary; returns its name. `info_from` copies
  /// elem type and shape from that tensor (when not empty).
  std::string Op(const std::string& op, const std::vector<std::string>& inputs,
                 const std::vector<onnx::AttributeProto>& attrs = {}, const std::string& domain = "",
                 const std::string& info_from = "");

  /// Constant node (backward section) with a fresh prefixed name.
  std::string Const(const std::string& suffix, const onnx::TensorProto& value);
  std::string ScalarConst(const std::string& suffix, DataType dtype, double v);
  std::string Int64Const(const std::string& suffix, const std::vector<int64_t>& values);
  /// Shared un-prefixed scalar constants: "ZeroConstant_Type<t>", "HalfConstant_Type<t>",
  /// "OneConstant_Type<t>" (rank 0 so that scalars keep their rank).
  std::string SharedConst(const std::string& kind, DataType dtype, double v);

  /// int64 shape of `tensor`: a constant when every dim is literal, otherwise a Shape node placed
  /// in the forward section right after the tensor's producer (so only the shape is kept).
  std::string ShapeOfTensor(const std::string& tensor);

  // Opset-aware axis ops.
  void ReduceSum(const std::string& x, const std::vector<int64_t>& axes, bool keepdims, const std::string& out);
  void Unsqueeze(const std::string& x, const std::vector<int64_t>& axes, const std::string& out);
  void Squeeze(const std::string& x, const std::vector<int64_t>& axes, const std::string& out);

  /// Writes to `out` the sum of `grad` over the axes along which `target_shape` was broadcast to
  /// `grad_shape` (numpy rules), reshaped to the target. Static when the shapes decide every axis,
  /// otherwise Shape + BroadcastGradientArgs + ReduceSum(keepdims) + Reshape. `target` names a
  /// tensor with that shape (used for the dynamic path). Identity when nothing is broadcast.
  void ReduceTo(const std::string& grad, const std::optional<Shape>& grad_shape, const std::string& target,
                const std::optional<Shape>& target_shape, const std::string& out);
  /// True unless the shapes show statically that nothing is broadcast (same shapes).
  static bool MayNeedReduce(const std::optional<Shape>& grad_shape, const std::optional<Shape>& target_shape);

  /// ReduceTo for a forward tensor target.
  void ReduceTo(const std::string& grad, const std::optional<Shape>& grad_shape, const std::string& target,
                const std::string& out) {
    ReduceTo(grad, grad_shape, target, ShapeOf(target), out);
  }

  /// Copies the forward node's attributes (all but those in `except`).
  std::vector<onnx::AttributeProto> CopyAttrs(const std::set<std::string>& except = {}) const;

 private:
  GradShared& shared_;
  const Node& node_;
  std::string prefix_;
  std::vector<std::string> go_;
  std::vector<std::string> gi_;
  int emitted_ = 0;
};

using GradRule = GradRuleFn;

/// The rule, stop edges and saved outputs of one op (ir/op_def.h).
using GradRuleInfo = GradInfo;

/// The rule for a forward node (with the fallback between the default domain and com.microsoft of
/// ir/op_key.h), or nullptr.
const GradRuleInfo* FindGradRule(const Node& node);
/// "op" / "domain::op" of every registered rule.
std::vector<std::string> RegisteredGradOps();

}  // namespace memopt::grad
