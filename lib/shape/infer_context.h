// What a shape rule sees: one node, the inferred info of its inputs, and setters for its
// outputs. Rules are plain functions `Status Rule(InferContext&)`; they return an error only for
// a definite contradiction (e.g. constant MatMul inner dims that differ) and otherwise record a
// diagnostic and leave what they cannot resolve unknown (a fresh `unk__<N>` dim or no shape).
//
// InferState is the per-graph state the driver owns: the fresh-dim counter, the diagnostics, and
// the broadcast notes (which Max(a, b) dims came from broadcasting two different symbols), so the
// declared-shape merge can resolve them.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "ir/graph.h"
#include "shape/shape_infer.h"
#include "sym/sym_expr.h"
#include "util/status.h"

namespace memopt::shape {

/// Dims produced by broadcasting two different symbolic dims: result -> (a, b). At run time such
/// dims are equal unless one of them is 1, so a declared dim equal to either operand is taken
/// as the resolution (see shape_infer.cc, MergeDeclared).
class BroadcastNotes {
 public:
  void Record(const SymExpr& result, const SymExpr& a, const SymExpr& b);
  /// True when `dim` is `candidate` or an ambiguous broadcast with `candidate` among its
  /// (transitive) operands.
  bool Admits(const SymExpr& dim, const SymExpr& candidate) const;
  /// Records that `result` is Min(a, b) (value propagation of Min), so that broadcasting x with
  /// Min(x, y) gives x.
  void RecordMin(const SymExpr& result, const SymExpr& a, const SymExpr& b);
  /// True when `dim` is a recorded Min with `operand` as one of its operands.
  bool IsMinOf(const SymExpr& dim, const SymExpr& operand) const;

 private:
  std::map<SymExpr, std::pair<SymExpr, SymExpr>> ambiguous_;
  std::map<SymExpr, std::pair<SymExpr, SymExpr>> mins_;
};

/// Per-graph inference state shared by all rule invocations.
struct InferState {
  int64_t next_fresh = 0;                     ///< N of the next `unk__<N>`
  std::vector<ShapeDiagnostic> diagnostics;   ///< in node order
  BroadcastNotes broadcast;
  /// Dims proven constant by an op that requires equality (a matmul inner dim that is a symbol
  /// on one side and a constant on the other); substituted into every later output.
  DimBindings learned;
};

class InferContext {
 public:
  InferContext(Graph& graph, Node& node, InferState& state);

  const Graph& graph() const { return graph_; }
  const Node& node() const { return node_; }
  /// The node's resolved schema version, else the graph's opset for its domain.
  int64_t opset() const;

  // ---- inputs ----
  size_t NumInputs() const { return node_.inputs.size(); }
  bool HasInput(size_t i) const { return i < node_.inputs.size() && node_.inputs[i] != kNone; }
  const std::string& InputName(size_t i) const;
  /// nullptr when the input is absent.
  const Value* InputValue(size_t i) const;
  DataType InputType(size_t i) const;
  /// nullptr when the input is absent or its rank is unknown.
  const Shape* InputShape(size_t i) const;
  std::optional<int64_t> InputRank(size_t i) const;
  /// Known element values (flattened), nullptr when unknown.
  const std::vector<SymExpr>* InputValues(size_t i) const;
  /// Known values that are all integer constants.
  std::optional<std::vector<int64_t>> InputInts(size_t i) const;

  // ---- outputs ----
  size_t NumOutputs() const { return node_.outputs.size(); }
  bool HasOutput(size_t i) const { return i < node_.outputs.size() && node_.outputs[i] != kNone; }
  const std::string& OutputName(size_t i) const;
  /// The output as inferred so far (valid for present outputs).
  const TensorInfo& OutputInfo(size_t i) const;
  void SetOutput(size_t i, DataType dtype, std::optional<Shape> shape);
  /// Copies dtype and shape of input `in` to output `out` (the "same as input" rule).
  void CopyInputToOutput(size_t in, size_t out);
  /// Element values of output i (the driver drops them unless the tensor is small and integral).
  void SetOutputValues(size_t i, std::vector<SymExpr> values);

  // ---- unknowns, diagnostics, errors ----
  /// A fresh `unk__<N>` for dim `dim` of output `out`, recorded with `reason`
  /// ("dim 1 of 'x' unresolved: <reason>").
  SymExpr FreshDim(size_t out, size_t dim, const std::string& reason);
  /// A fresh dim for a size only the data decides (NonZero's count), named "nonzero__<k>" after
  /// `kind` rather than unk__, so that hints can say what it is.
  SymExpr DataDependentDim(size_t out, size_t dim, const std::string& kind, const std::string& reason);
  /// A rank-`rank` shape of fresh dims; nullopt (unknown rank, with a diagnostic) when `rank` is
  /// past kMaxFreshRank, which only a malformed model asks for (e.g. a Reshape whose shape input
  /// declares a length of 10^12).
  std::optional<Shape> FreshShape(size_t out, size_t rank, const std::string& reason);
  static constexpr size_t kMaxFreshRank = 1024;
  void Diagnose(const std::string& tensor, const std::string& message);
  /// Records that two dims the op requires to be equal are equal: when one is a bare symbol and
  /// the other a constant, the symbol's value is learned for the rest of the graph.
  void RequireEqualDims(const SymExpr& a, const SymExpr& b);
  /// kInvalidInput naming the node: "node 'n' (Op): <message>".
  Status Error(const std::string& message) const;

  /// Called by a rule that has nothing to say for this node (e.g. an ATen operator it does not
  /// know): the driver then treats the node like an op without a rule (declared info, else a
  /// diagnostic and an ops_without_rule entry).
  void Decline() { declined_ = true; }
  bool declined() const { return declined_; }

  /// The fresh symbols this node created (names), for the declared-shape merge.
  const std::set<std::string>& fresh_names() const { return fresh_names_; }
  BroadcastNotes& broadcast_notes() { return state_.broadcast; }
  /// The info the model declared for output i before inference (nullptr when none).
  const TensorInfo* DeclaredOutput(size_t i) const;
  void set_declared(const std::vector<TensorInfo>* declared) { declared_ = declared; }

 private:
  Graph& graph_;
  Node& node_;
  InferState& state_;
  std::set<std::string> fresh_names_;
  const std::vector<TensorInfo>* declared_ = nullptr;
  bool declined_ = false;
};

// ---- helpers shared by rule files ----

/// An int list given either as an attribute (older opsets) or as an input (newer ones), e.g. the
/// axes of Squeeze/Unsqueeze/Reduce*, the split of Split, the pads of Pad.
struct IntListArg {
  bool present = false;                        ///< attribute or input given
  std::optional<std::vector<int64_t>> values;  ///< when known
  std::optional<int64_t> length;               ///< when known (from the values or the input's shape)
};
IntListArg ReadIntList(const InferContext& ctx, const std::string& attr, size_t input);

/// Normalises a possibly negative axis into [0, rank); nullopt when out of range.
std::optional<int64_t> NormalizeAxis(int64_t axis, int64_t rank);
/// Ends at or beyond this (INT_MAX) mean "to the end" in Slice for a symbolic dim.
inline constexpr int64_t kSliceToEnd = 2147483647;
/// The element indices that ONNX Slice selects from a dim of constant length (clamping rules of
/// Slice-10+, negative starts/ends counted from the end, any non-zero step).
std::vector<int64_t> SliceIndices(int64_t dim, int64_t start, int64_t end, int64_t step);
/// Length of a sliced dim. Constant dim and bounds: exact. Otherwise the bounds are assumed to be
/// in range: negative constants count from the end (d + v), constants >= INT_MAX mean the end,
/// other constants are taken as they are, symbolic bounds as they are; the length is
/// (end - start) for step 1, else CeilDiv(end - start, step) (mirrored for negative steps).
SymExpr SlicedDim(const SymExpr& dim, const SymExpr& start, const SymExpr& end, int64_t step);

/// "[a, b, 3]" of int64 values, for messages.
std::string IntsToString(const std::vector<int64_t>& values);
/// a / b when the quotient is a polynomial with integer coefficients (an exact division of
/// dims); nullopt otherwise.
std::optional<SymExpr> IntegerQuotient(const SymExpr& a, const SymExpr& b);
/// a / b for dims: the exact quotient when there is one, else the floor(a/b) atom.
SymExpr DivideDims(const SymExpr& a, const SymExpr& b);
/// Product of the dims in [begin, end).
SymExpr ProductOfDims(const Shape& shape, size_t begin, size_t end);
/// Integer elements of a TensorProto (int8..uint64 and bool, typed fields or raw_data);
/// nullopt for other types or more than `max_elements` elements.
std::optional<std::vector<int64_t>> DecodeIntTensor(const onnx::TensorProto& tensor,
                                                    int64_t max_elements);
/// Float elements (float, double, float16 as float) of a small TensorProto.
std::optional<std::vector<double>> DecodeFloatTensor(const onnx::TensorProto& tensor,
                                                     int64_t max_elements);
/// Shape of a TensorProto (its dims, all constant).
Shape TensorProtoShape(const onnx::TensorProto& tensor);

}  // namespace memopt::shape
