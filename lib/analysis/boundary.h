// Where the forward pass ends (docs/boundary.md):
//   1. --boundary NODE (ScanOptions::boundary_node): that node and everything it depends on is
//      forward (Boundary::kOverride);
//   2. exactly one node with op type "YieldOp" (ORTModule graphs, ORT's rule; kYieldOp); two or
//      more are an error, as in ORT;
//   3. no YieldOp: the loss rule (kLoss). Gradient nodes are nodes whose op type contains "Grad"
//      or whose name contains "_Grad/"; they and everything downstream of them are backward, the
//      rest is forward. The boundary node is the forward node with "Loss" in its op type whose
//      output is a graph output, else the last forward node in topological order. Without
//      gradient nodes the graph is forward-only (kNone).
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"
#include "util/status.h"

namespace memopt {

/// Where the forward pass ends.
struct Boundary {
  enum class Kind {
    kYieldOp,   ///< exactly one YieldOp (ORT's rule); YieldOp itself counts as forward
    kOverride,  ///< --boundary NODE: that node and everything it depends on is forward
    kLoss,      ///< no YieldOp: the loss node rule (docs/boundary.md)
    kNone,      ///< forward-only graph: no backward pass
  };
  Kind kind = Kind::kNone;
  NodeId node = kNone;       ///< the boundary node (YieldOp, override or loss node)
  std::string explanation;   ///< one line for reports, e.g. "YieldOp 'YieldOp_12'"
};

struct ScanOptions;  // analysis/scan.h

/// Decides the forward/backward boundary. Errors: unknown --boundary node (with a did-you-mean),
/// several YieldOps, a cycle (the loss rule needs a topological order).
Expected<Boundary> FindBoundary(const Graph& graph, const ScanOptions& options);

/// The loss rule's gradient test: op type contains "Grad" or name contains "_Grad/".
bool IsGradientNode(const Node& node);

/// Per node id: 1 when the loss rule puts the node in the backward pass (a gradient node or
/// downstream of one), else 0.
std::vector<char> LossRuleBackwardMask(const Graph& graph);

}  // namespace memopt
