// Fast, exact evaluation of a plan selection: the peak memory of the rewritten graph (same
// liveness rules as analysis/peak_estimate.h, along the order the written file runs in) and the
// compute the clones add. Used by the budget planner thousands of times per run: the rewrite is
// built as index data (rewrite/rewrite_spec.h) and scheduled on a skeleton graph, without names,
// shapes or protos. The result equals EstimatePeak on the graph `apply` writes (tested).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "analysis/scan.h"
#include "ir/graph.h"
#include "plan/cost_model.h"
#include "rewrite/rewrite_spec.h"
#include "util/status.h"

namespace memopt {

/// What the budget planner minimises (plan --objective): the cost model's estimated time of the
/// clones (default) or their FLOPs.
enum class PlanObjective { kTime, kFlops };

struct PlanEvaluation {
  int64_t peak_bytes = 0;
  int32_t peak_position = -1;
  /// Live bytes at each step's peak check (outputs of the step allocated), when requested.
  std::vector<int64_t> live_at_step;
  /// With the curve: the original node each step runs, or kNone for a clone.
  std::vector<NodeId> step_original;
  /// Sum over steps of max(0, live - threshold) for the threshold given to Evaluate.
  double excess = 0;
  int64_t added_flops = 0;
  int64_t added_bytes_moved = 0;
  double added_seconds = 0;
  int nodes_added = 0;
};

class PlanEvaluator {
 public:
  /// `dims`: bound dims (unbound ones count as 1024, as in the peak estimate).
  static Expected<PlanEvaluator> Create(const Graph& graph, const ScanResult& scan, const DimBindings& dims,
                                        const CostModel& cost_model = {});

  /// Evaluates `plans` (plan indices of spec_builder(): the scan's plans and splits). `excess_threshold` > 0 fills `excess`.
  Expected<PlanEvaluation> Evaluate(const std::vector<size_t>& plans, bool want_curve = false,
                                    int64_t excess_threshold = 0) const;

  const RewriteSpecBuilder& spec_builder() const { return builder_; }
  /// Recompute cost of the clones of `plans` (shared clones counted once): estimated seconds, or
  /// FLOPs with PlanObjective::kFlops.
  double CostOf(const std::vector<size_t>& plans, PlanObjective objective = PlanObjective::kTime) const;
  /// The original nodes `plans` clone in their first groups (each once, ascending: plans share
  /// them), and one node's cost.
  std::vector<NodeId> ClonedNodes(const std::vector<size_t>& plans) const;
  /// Cost of the further copies the splits among `plans` add (each split once: its plan's
  /// subgraph again; copies are never shared), and the private chains' copies (counted on the
  /// rewrite: they depend on the other plans applied).
  double CopyCostOf(const std::vector<size_t>& plans, PlanObjective objective) const;
  double NodeCostOf(NodeId node, PlanObjective objective) const {
    return objective == PlanObjective::kTime ? node_cost_[node].seconds : static_cast<double>(node_cost_[node].flops);
  }
  /// FLOPs of the forward pass (nodes up to the boundary).
  int64_t forward_flops() const { return forward_flops_; }
  /// Nodes of the original graph (the steps of StepPeaks-style curves).
  size_t num_nodes() const { return graph_.nodes.size(); }
  int64_t weights_and_inputs_bytes() const { return always_bytes_; }
  /// Bytes of an original value at the dims (0 when unknown).
  int64_t value_bytes(ValueId v) const { return value_bytes_[v]; }

 private:
  PlanEvaluator(const Graph& graph, const ScanResult& scan) : graph_(graph), scan_(scan), builder_(graph, scan) {}

  const Graph& graph_;
  const ScanResult& scan_;
  RewriteSpecBuilder builder_;
  std::vector<NodeId> base_order_;
  std::vector<int64_t> value_bytes_;
  std::vector<char> always_live_;
  int64_t always_bytes_ = 0;
  std::vector<NodeCost> node_cost_;
  int64_t forward_flops_ = 0;
};

}  // namespace memopt
