// Applies recompute plans to the IR: the rewritten Graph (clones, rewired backward consumers,
// Dropout seeds, every Node::proto kept in sync) with its nodes in the order they are written,
// and the execution order the rewritten graph runs in.
//
// Node order of the written graph (RewrittenNodeOrder):
//   * graphs with a YieldOp: the original nodes in topological order (their file order when the
//     file is sorted), each clone group inserted right before its first reader. Node ids keep
//     their relative order, so ORT's MEMORY_EFFICIENT order of the written file treats the
//     original nodes exactly as before and schedules each clone group right before its first
//     backward consumer (reference §6.4);
//   * other graphs (loss rule, --boundary, no boundary): the original nodes in the order `scan`
//     runs them, clones inserted the same way; the written node order is the execution order.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "analysis/scan.h"
#include "ir/graph.h"
#include "rewrite/rewrite_spec.h"
#include "util/status.h"

namespace memopt {

struct RewrittenGraph {
  Graph graph;                   ///< node ids = written order
  std::vector<NodeId> new_id;    ///< per original node id
  std::vector<NodeId> clone_id;  ///< per clone (RewriteSpec::clones order)
  Boundary boundary;             ///< the pre-rewrite boundary, mapped to the new ids
  /// The execution order (see ExecutionOrderOf); filled by RewriteGraph.
  ExecutionOrder order;
};

/// True when the boundary orders the backward pass like ORT (YieldOp, or --boundary naming one).
bool IsYieldStyle(const Graph& graph, const Boundary& boundary);

/// The base order RewrittenNodeOrder starts from (see the file comment).
Expected<std::vector<NodeId>> RewriteBaseOrder(const Graph& graph, const ScanResult& scan);

/// Builds the rewritten graph from a spec and a node order (RewrittenNodeOrder). `full` = false
/// gives a skeleton for scheduling only: op types, inputs, outputs and value links (no names,
/// shapes or protos).
RewrittenGraph MaterializeRewrite(const Graph& graph, const ScanResult& scan, const RewriteSpec& spec,
                                  const std::vector<int32_t>& node_order, bool full);

/// The order the rewritten graph runs in: MEMORY_EFFICIENT for YieldOp-style boundaries (what
/// ORT and `scan` do with the written file), else the node order (forward nodes first:
/// `forward_nodes` of them).
Expected<ExecutionOrder> RewrittenExecutionOrder(const RewrittenGraph& rewritten, int32_t forward_nodes);

/// Spec + order + full materialization + execution order in one call.
Expected<RewrittenGraph> RewriteGraph(const Graph& graph, const ScanResult& scan, const RewriteSpec& spec);

/// Adds `seed` to a Dropout-family node of `graph` (proto attribute), as the rewrite does: the
/// seed its first output's name gives (exec/philox.h).
void SetDropoutSeed(const Graph& graph, Node& node);

}  // namespace memopt
