// `Scan`: the whole recompute analysis of one training graph, as ORT's memory optimizer does it
// (see ../shared/reference/ort_memory_optimizer.md), plus a static peak-memory estimate.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "analysis/boundary.h"
#include "analysis/exec_order.h"
#include "ir/graph.h"
#include "sym/sym_expr.h"
#include "util/status.h"

namespace memopt {

class OpTable;  // analysis/op_table.h

/// A forward output that some backward node consumes (ORT's stashed activation).
struct StashedOutput {
  int32_t output_index = -1;
  ValueId value = kNone;
  std::optional<SymExpr> bytes;  ///< nullopt when the shape or type is unknown
};

/// One recompute (type 1) or compromised recompute (type 2) plan for one entry node.
struct RecomputePlan {
  NodeId entry = kNone;
  std::vector<StashedOutput> outputs;  ///< the entry node's stashed outputs
  std::vector<NodeId> subgraph;        ///< nodes to recompute, in execution order; entry last
  bool compromise = false;             ///< type 2
  Rational save_ratio = 1;             ///< 1, or 1 - in/out size ratio of the widening Cast
  std::string cluster_id;              ///< op types joined with '+', trailing '+'
  int type() const { return compromise ? 2 : 1; }
  /// Bytes freed between forward and backward: every stashed output x save_ratio.
  /// (ORT counts only one output of a multi-output node; memopt counts all - docs/scan.md.)
  std::optional<SymExpr> saving;
};

/// Plans grouped by combination id "<cluster>:<type>:-1" (the ORT Python table rows).
struct PlanGroup {
  std::string config;          ///< "Gelu+:1:-1"
  std::string cluster_id;
  int type = 1;
  int freq = 0;
  std::vector<size_t> plans;   ///< indices into ScanResult::plans, in execution order
  std::optional<SymExpr> saving;  ///< sum over the occurrences; nullopt when some size is unknown
  std::optional<int64_t> saving_bytes;  ///< evaluated at --dims when every dim is bound
};

/// One stashed node the search could not plan, with the reason (for --details).
struct RejectedCandidate {
  NodeId node = kNone;
  std::string reason;  ///< "op not recomputable at level 1", "feeds layer boundary LN ..."
};

struct PeakEstimate {
  bool sized = false;               ///< false when some dim is unbound: peak is symbolic
  int64_t peak_bytes = 0;           ///< at --dims (valid when sized)
  SymExpr peak_expr;                ///< live bytes at the peak step, symbolic
  int32_t peak_position = -1;       ///< index in the execution order
  NodeId peak_node = kNone;
  int64_t stashed_bytes_at_peak = 0;   ///< stashed activations live at the peak (when sized)
  SymExpr stashed_expr_at_peak;
  int64_t weights_and_inputs_bytes = 0;  ///< initializers + graph inputs (always live)
  /// When sized: the arena the values the order produces need when laid out ahead of time
  /// (analysis/memory_layout.h: 64-byte aligned offsets, holes included), and that plus the
  /// weights and inputs: what a static allocator holds, beside the live-bytes peak above.
  int64_t arena_bytes = 0;
  int64_t footprint_bytes = 0;
  int unsized_values = 0;           ///< values with unknown shape/type, counted as 0 bytes
  std::vector<ValueId> unsized;     ///< those values, by id (ascending)
  std::vector<std::string> unbound_dims;  ///< dims that must be bound for concrete numbers
  /// Live bytes after each step of the order (when sized), for timelines.
  std::vector<int64_t> live_after_step;
};

struct ScanOptions {
  /// 0: basic op table; 1: advanced table + transformer layer boundaries; 2: also type-2 plans.
  int level = 1;
  /// Probe-level of the op table (ORT: 0 basic, 1 advanced). Derived from level when < 0.
  int probe_level = -1;
  /// Transformer layer boundaries (ORT probe "x:1"). Derived from level when nullopt.
  std::optional<bool> layer_boundary;
  std::string boundary_node;   ///< --boundary NODE override ("" = automatic)
  const OpTable* op_table = nullptr;  ///< nullptr = the built-in table
  DimBindings dims;
  /// Recompute subgraph size limit: 0 = none (ORT HEAD); 15 or 50 reproduce older ORT builds.
  size_t max_recompute_nodes = 0;
};

struct ScanResult {
  Boundary boundary;
  ExecutionOrder order;
  std::vector<NodeId> layer_boundaries;   ///< in execution order
  std::vector<NodeId> stashed_nodes;      ///< candidate nodes in execution order
  std::vector<RecomputePlan> plans;       ///< in reverse execution order of entries (ORT's walk), both types
  std::vector<RejectedCandidate> rejected;  ///< stashed nodes without a plan, in execution order
  std::vector<PlanGroup> groups;          ///< groups shown at this level, sorted: saving desc, then config
  PeakEstimate peak;
};

/// Runs the analysis. The graph must have been shape-inferred (InferShapes).
Expected<ScanResult> Scan(const Graph& graph, const ScanOptions& options);

}  // namespace memopt
