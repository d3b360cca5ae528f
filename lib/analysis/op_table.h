// The recomputable-op table: which ops a recompute subgraph may contain, at which probe level,
// for which since-versions, and which of their inputs are not traversed ("ignorable" inputs,
// e.g. Expand's shape). The data lives in configs/recompute_ops.json (ORT HEAD's table, see
// ../shared/reference/ort_memory_optimizer.md §3.5) and is compiled in as kBuiltinOpTableJson.
//
// JSON format (schema_version 1):
//   {"schema_version": 1, "description": "...",
//    "ops": [{"domain": "", "op": "Add", "level": 0, "versions": {"1": [], "6": [], ...}}, ...],
//    "python_op_func_names": ["flash_attn.bert_padding.IndexFirstAxis", ...],
//    "small_static_elements": 1024}
// "small_static_elements" (optional): a recompute search does not traverse an input whose shape is
// fully static with fewer elements; the clone reads the original tensor, which stays alive.
// ONNX Runtime's rule is 1,048,576 (the default; ../shared/reference/ort_memory_optimizer.md
// §3.2), which on small static exports keeps whole activations alive for a clone; memopt's
// extended table sets 1024 (shape tensors and scalars), so its subgraphs reach back to what is
// stashed, weights and graph inputs.
// An entry may also carry "enabled": false, which removes that op when the table is merged
// onto another one (user tables passed with --op-table extend or override the built-in one).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "ir/graph.h"
#include "util/status.h"

namespace memopt {

/// The compiled-in text of configs/recompute_ops.json (generated builtin_op_table.cc).
extern const std::string_view kBuiltinOpTableJson;
/// The compiled-in text of configs/recompute_ops_extended.json: memopt's additions (--ops extended).
extern const std::string_view kExtendedOpTableJson;

class OpTable {
 public:
  /// One op: "<domain>::<op>" with its level and since-version -> ignorable input indices.
  struct OpEntry {
    std::string domain;  ///< "" = ai.onnx, "com.microsoft", ...
    std::string op;
    int level = 0;       ///< 0 basic, 1 advanced
    bool enabled = true; ///< false: remove the op when merged onto another table
    std::map<int, std::vector<int>> versions;  ///< since-version -> ignorable inputs (sorted)
  };

  /// Parses the JSON text. Errors (kInvalidInput) name `source` and the offending entry.
  static Expected<OpTable> Parse(std::string_view text, std::string_view source = "op table");
  /// The built-in table (configs/recompute_ops.json), parsed once.
  static const OpTable& Builtin();
  /// The built-in table with memopt's extended ops merged in (configs/recompute_ops_extended.json:
  /// deterministic ops the executor runs whose cost the cost model knows), parsed once.
  static const OpTable& Extended();

  /// Adds `extra`'s ops to this table: an op present in both takes `extra`'s level, and
  /// `extra`'s versions replace or add to this one's version by version; an entry with
  /// "enabled": false removes the op. PythonOp func names are united.
  Status Merge(const OpTable& extra);

  /// The node's op is listed at a level <= probe_level for its since-version (and, for
  /// com.microsoft::PythonOp, its func_name attribute is allow-listed).
  bool IsRecomputable(const Node& node, int probe_level) const;
  /// Input indices of `node` that a recompute search does not traverse (empty when none or
  /// when the node is not listed).
  const std::vector<int>& IgnorableInputs(const Node& node) const;

  const OpEntry* Find(std::string_view domain, std::string_view op) const;
  /// Every enabled entry, sorted by (domain, op).
  std::vector<const OpEntry*> Entries() const;
  const std::set<std::string>& python_op_func_names() const { return python_op_func_names_; }
  size_t size() const { return ops_.size(); }
  /// Inputs with a fully static shape of fewer elements are not traversed (see the file comment).
  int64_t small_static_elements() const { return small_static_elements_.value_or(int64_t{1} << 20); }

 private:
  static std::string Key(std::string_view domain, std::string_view op);
  std::map<std::string, OpEntry, std::less<>> ops_;  ///< key "domain::op"
  std::set<std::string> python_op_func_names_;
  std::optional<int64_t> small_static_elements_;  ///< nullopt: ONNX Runtime's 2^20
};

/// True when a recompute cluster id ("Conv+Relu+") names an op of memopt's extended table that ONNX
/// Runtime's table lacks: a config planned with --ops extended, which apply must be given too.
bool ClusterNeedsExtendedOps(std::string_view cluster_id);

}  // namespace memopt
