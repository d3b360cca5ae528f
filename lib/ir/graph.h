// The analysis IR: a graph of nodes and values indexed by integer ids, built from an ONNX model
// without reading weight bytes. Node ids are the proto order (ORT's node index), which the
// memory-efficient order and the cluster strings depend on.
#pragma once

#include <onnx/onnx_pb.h>  // defines ONNX_API, then includes onnx-ml.pb.h

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/dtype.h"
#include "sym/sym_expr.h"

namespace memopt {

using NodeId = int32_t;
using ValueId = int32_t;
constexpr int32_t kNone = -1;

/// Elem type and (possibly unknown) shape of a tensor value.
struct TensorInfo {
  DataType dtype = DataType::kUndefined;
  std::optional<Shape> shape;  ///< nullopt: rank unknown
  bool is_tensor = true;       ///< false for sequence/optional/map values (never sized)

  /// numel * elem bytes, or nullopt when the shape or type is unknown.
  std::optional<SymExpr> Bytes() const;
};

/// Where an initializer's bytes live; nothing is read at load time except small integer
/// tensors (<= kMaxFoldedElements), whose values feed shape arithmetic.
struct InitializerInfo {
  enum class Storage { kInline, kExternal };
  Storage storage = Storage::kInline;
  std::vector<int64_t> dims;
  DataType dtype = DataType::kUndefined;
  uint64_t file_offset = 0;       ///< kInline: offset of the TensorProto message in the model file
  uint64_t file_length = 0;       ///< kInline: length of that message
  std::string external_location;  ///< kExternal: path relative to the model's folder
  uint64_t external_offset = 0;
  std::optional<uint64_t> external_length;
  /// kInline with raw_data: absolute offset and size of the raw_data payload in the model file
  /// (lets a later stage read the weights without parsing the TensorProto again).
  std::optional<uint64_t> raw_data_offset;
  uint64_t raw_data_length = 0;
  /// A sparse_initializer: dims are the dense shape, the offsets locate the SparseTensorProto.
  bool is_sparse = false;
  /// A tensor memopt made rather than read (grad's restored PyTorch parameters,
  /// grad/torch_parameters.h): its serialized TensorProto lives here, not in the model file, and
  /// the writers append it. file_offset then only orders it among the file's initializers.
  std::shared_ptr<const std::string> owned_proto;
};

struct Value {
  std::string name;
  TensorInfo info;
  NodeId producer = kNone;       ///< kNone for graph inputs and initializers
  int32_t producer_output = -1;  ///< output index within the producer
  /// (consumer node, input index), in node-id order then input order.
  std::vector<std::pair<NodeId, int32_t>> consumers;
  bool is_graph_input = false;
  bool is_graph_output = false;
  std::optional<InitializerInfo> initializer;
  /// Element values when known (small int tensors: constants, shape arithmetic). Flattened.
  std::optional<std::vector<SymExpr>> known_values;
};

struct Node {
  NodeId id = kNone;
  std::string name;
  std::string op_type;
  std::string domain;            ///< "" for ai.onnx ("ai.onnx" is normalised to "")
  std::vector<ValueId> inputs;   ///< kNone for an omitted optional input
  std::vector<ValueId> outputs;  ///< kNone for an omitted optional output
  int since_version = 0;         ///< schema version the node resolves to (0 = unknown)
  /// The PyTorch module the node belongs to, where the exporter says ("" when unknown):
  /// io/torch_module_names.h.
  std::string module;
  /// Attributes and everything else the file says of the node, untouched, but its edges: the
  /// inputs and outputs live in `inputs` / `outputs` only (Graph::ToProto writes them back).
  onnx::NodeProto proto;

  // Attribute helpers (default returned when the attribute is absent).
  bool HasAttr(const std::string& name) const;
  int64_t GetInt(const std::string& name, int64_t def) const;
  float GetFloat(const std::string& name, float def) const;
  std::string GetString(const std::string& name, const std::string& def) const;
  std::vector<int64_t> GetInts(const std::string& name) const;
  const onnx::TensorProto* GetTensor(const std::string& name) const;
  /// "name (OpType)" for messages; uses "<op_type>#<id>" when the node is unnamed.
  std::string Describe() const;
};

class Graph {
 public:
  std::string name;
  std::vector<Node> nodes;
  std::vector<Value> values;
  std::vector<ValueId> inputs;            ///< declared graph inputs, in order
  std::vector<ValueId> outputs;           ///< declared graph outputs, in order
  std::map<std::string, int64_t> opsets;  ///< domain ("" = ai.onnx) -> version

  /// Id of the value called `name`, or kNone. Values appended to `values` directly are found too;
  /// after renaming a value call RebuildLinks() so that the index knows the new name.
  ValueId FindValue(const std::string& name) const;
  /// Returns the id of `name`, creating an empty value when it does not exist yet.
  ValueId GetOrAddValue(const std::string& name);
  /// The node as the file holds it: `proto` with the input and output names of its value ids
  /// ("" for an omitted optional one).
  onnx::NodeProto ToProto(const Node& node) const;
  /// Rebuilds producer/consumer links from node inputs/outputs (after edits), the graph-input/
  /// output flags from `inputs`/`outputs`, and the name index.
  void RebuildLinks();

  const Value& value(ValueId id) const { return values[id]; }
  Value& value(ValueId id) { return values[id]; }
  const Node& node(NodeId id) const { return nodes[id]; }
  int64_t OpsetVersion(const std::string& domain) const;

 private:
  std::unordered_map<std::string, ValueId> value_index_;
};

/// Resolves each node's since_version from the opset imports (ONNX schema registry, plus a table
/// for ops newer than the linked ONNX release and for ORT contrib schemas).
void ResolveSinceVersions(Graph& graph);

/// The since_version one node of (domain, op_type) resolves to under `graph`'s opset imports:
/// 1 for non-ONNX domains, 0 for an op unknown in an ONNX domain.
int ResolveSinceVersion(const Graph& graph, const std::string& domain, const std::string& op_type);

}  // namespace memopt
