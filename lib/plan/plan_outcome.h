// The exact outcome of applying a set of plans: the rewritten graph (as `apply` writes it), its
// execution order and static peak estimate (analysis/peak_estimate.h: the peak the CPU executor
// measures on the written file), its stashed activations, and the compute the clones add.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "analysis/scan.h"
#include "ir/graph.h"
#include "plan/cost_model.h"
#include "rewrite/recompute_rewrite.h"
#include "rewrite/rewrite_spec.h"
#include "util/status.h"

namespace memopt {

/// Stashed activations of a graph under an order: forward outputs read by the backward pass
/// (YieldOp outputs excluded), their total at the dims (unbound dims at 1024) and symbolically.
struct StashedTotal {
  int64_t bytes = 0;
  SymExpr expr;
  int values = 0;
  std::vector<char> is_stashed_value;  ///< per value id
};
StashedTotal StashedActivations(const Graph& graph, const ExecutionOrder& order, const Boundary& boundary,
                                const DimBindings& dims);

struct PlanOutcome {
  RewriteSpec spec;
  RewrittenGraph rewritten;
  PeakEstimate peak;        ///< of the rewritten graph along rewritten.order
  StashedTotal stashed;     ///< of the rewritten graph
  int64_t added_flops = 0;
  int64_t added_bytes_moved = 0;
  double added_seconds = 0;
  int nodes_added = 0;
  int rewired_inputs = 0;
};

Expected<PlanOutcome> EvaluatePlanExactly(const Graph& graph, const ScanResult& scan, const std::vector<size_t>& plans,
                                          const DimBindings& dims, const CostModel& cost_model = {});

/// A config entry ("<cluster>:<type>:-1") whose occurrences among a plan set raise the peak alone.
struct PeakRaiser {
  std::string config;
  int64_t peak_bytes = 0;  ///< the peak with only this entry's occurrences applied
};
/// The entries of `plans` that, applied alone, give a sized peak above the scan's (sized) peak, in
/// the order their first occurrence appears in `plans`; empty while dims are unbound. One exact
/// evaluation per entry: call it for a plan set known to raise the peak.
Expected<std::vector<PeakRaiser>> FindPeakRaisers(const Graph& graph, const ScanResult& scan,
                                                  const std::vector<size_t>& plans, const DimBindings& dims);

/// A value live at a step, for "what would it take" messages.
struct LiveValue {
  ValueId value = kNone;
  int64_t bytes = 0;
  bool always_live = false;  ///< initializer or graph input
};
/// Values live at `position` of `order` (peak-estimate rules), largest first.
std::vector<LiveValue> LiveAt(const Graph& graph, const ExecutionOrder& order, int32_t position,
                              const DimBindings& dims);

}  // namespace memopt
