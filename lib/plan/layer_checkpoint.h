// Per-layer checkpointing as recompute plans: PyTorch's `checkpoint(layer)` habit, recomputing
// everything a transformer layer stashes from the layer's input during the backward pass. It is
// a reference point for the budget planner (plan --sweep, scripts/bench_plan.sh), not something
// memopt writes as a config.
//
// Layers are the spans between consecutive transformer layer boundaries (the attention-block
// LayerNorm of each layer, analysis/layer_boundary.h) in the forward execution order; the last
// layer is as long as the one before it. For every stashed node inside a layer except the layer's
// output (read by forward nodes after the layer: the next layer's input), the plan clones
// its ancestors inside the layer (execution order, the node last); values from outside the layer
// (its input, weights, the attention mask) are read as they are, so the layer input stays stashed.
// Clones shared between plans are made once (rewrite/rewrite_spec.h), so each layer's forward
// runs again once, before its first backward reader.
#pragma once

#include "analysis/scan.h"
#include "ir/graph.h"

namespace memopt {

/// `scan` with its plans replaced by the per-layer checkpoint plans (reverse execution order of
/// their entries, as ScanResult::plans); no plans when the graph has no layer boundary.
ScanResult LayerCheckpointScan(const Graph& graph, const ScanResult& scan);

}  // namespace memopt
