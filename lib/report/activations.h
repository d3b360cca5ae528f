// The per-activation view (`scan --activations`): every stashed activation (a forward output some
// backward node reads; not the YieldOp's outputs, which are the incoming gradients) with its producer, shape (symbolic and at the dims), dtype, bytes, live
// range (the forward step that produces it to the last backward step that reads it) and the
// decision under the current plan: RECOMPUTE when a selected plan frees it, else SAVE.
//
// Identical layers are folded: the forward pass is cut at the transformer layer boundaries
// (analysis/layer_boundary.h), the part before the first boundary is "pre", each boundary starts
// a layer, and what the last layer holds beyond a repeat of the layer before it (final norm, head,
// loss, shape bookkeeping) is "post". Consecutive layers whose rows match (producer op type,
// output index, dtype, symbolic shape, decision) become one row per tensor with the layer range
// and count; the first layer's names and plan are shown (the plan's cluster string may differ
// between layers: the first layer's often holds shared subgraphs; `configs` has them all).
// Without layer boundaries nothing is folded.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/scan.h"
#include "ir/graph.h"
#include "report/table.h"
#include "sym/sym_expr.h"

namespace memopt {

struct ActivationOptions {
  DimBindings dims;
  /// The current plan: indices into ScanResult::plans. Their stashed outputs are RECOMPUTE.
  std::vector<size_t> plans;
  std::string plan_label;  ///< how the report names the plan, e.g. "level 1 (every plan in the table)"
  bool fold = true;
};

/// The plans of the scan's plan table (ScanResult::groups): what ORTModule applies at that level.
std::vector<size_t> TablePlans(const ScanResult& scan);

struct ActivationRow {
  std::vector<ValueId> values;  ///< one per folded layer; values[0] is the one shown
  std::string segment;          ///< "pre", "layer 3", "layers 0-10", "post", or "" without layers
  int layer_first = -1;         ///< 0-based layer range; -1 for pre/post/no layers
  int layer_last = -1;
  NodeId producer = kNone;
  int32_t output_index = 0;
  int32_t forward_position = -1;  ///< step producing values[0] (0-based)
  int32_t last_use_position = -1; ///< last backward step reading values[0] (0-based)
  bool recompute = false;
  std::string config;             ///< the plan freeing values[0], "Gelu+:1:-1"; "" when SAVE
  std::vector<std::string> configs;  ///< per value (folded layers may differ in cluster string)
  std::optional<SymExpr> bytes;   ///< per tensor; nullopt when the size is unknown

  bool ConfigVaries() const {
    for (const std::string& c : configs) {
      if (c != config) return true;
    }
    return false;
  }
};

struct ActivationTable {
  std::vector<ActivationRow> rows;
  int layers = 0;        ///< layers found (0: no layer boundaries)
  int tensors = 0;       ///< stashed activations (before folding)
  int recompute_tensors = 0;
  SymExpr total_bytes;   ///< every stashed activation (unknown sizes count 0)
  SymExpr recompute_bytes;
};

ActivationTable BuildActivationTable(const Graph& graph, const ScanResult& scan, const ActivationOptions& options);

/// Columns: layer, tensor, producer, op, shape, at dims, dtype, bytes, live (steps), decision, plan.
/// Steps are 1-based, as in the scan report.
TextTable ActivationTextTable(const Graph& graph, const ActivationTable& table, const DimBindings& dims);

/// Summary lines and the table (kTable), or the table alone (kCsv, kMarkdown with a title line).
std::string RenderActivationsText(const std::string& model_name, const Graph& graph, const ActivationTable& table,
                                  const ActivationOptions& options, OutputFormat format);

/// Schema in docs/json_schema.md ("memopt scan --activations").
nlohmann::json ActivationsToJson(const std::string& model_name, const Graph& graph, const ActivationTable& table,
                                 const ActivationOptions& options);

}  // namespace memopt
