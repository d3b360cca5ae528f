// Transformer layer boundaries (ORT's FindLayerBoundaryLayerNormNodes,
// ../shared/reference/ort_memory_optimizer.md §3.8): the attention-block LayerNorm of each layer.
// A LayerNorm-type node (LayerNormalization, SkipLayerNormalization,
// SimplifiedLayerNormalization, SkipSimplifiedLayerNormalization) is a boundary when
//   1. its input 0 has >= 2 consumer nodes, among them an Add (the residual; the last one in
//      node-id order) and a LayerNorm-type node (the last one; usually the node itself),
//   2. that Add and that LayerNorm both run before the YieldOp (forward),
//   3. a BFS from the LayerNorm's consumers, visiting only nodes ordered before the YieldOp and
//      before the Add, reaches a Softmax, BiasSoftmax or flash-attention PythonOp.
// With layer boundaries on, a stashed node feeding input 0 of a boundary gets no recompute
// plan: the layer input stays stashed, as a per-layer checkpoint.
#pragma once

#include <vector>

#include "analysis/scan.h"
#include "ir/graph.h"

namespace memopt {

bool IsLayerNormType(const Node& node);

/// The boundary LayerNorm nodes, in execution order.
std::vector<NodeId> FindLayerBoundaryLayerNormNodes(const Graph& graph, const ExecutionOrder& order,
                                                    const Boundary& boundary);

}  // namespace memopt
