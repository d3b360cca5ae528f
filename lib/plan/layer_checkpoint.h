// Per-block checkpointing as recompute plans: PyTorch's `checkpoint(block)` habit, recomputing
// everything a block stashes from the block's input during the backward pass, for any
// architecture. It is a reference point for the budget planner (plan --sweep,
// scripts/bench_plan.sh), not something memopt writes as a config.
//
// Blocks (FindCheckpointBlocks), by the first source that gives two or more:
//   * PyTorch module paths (the exporter's metadata, Node::module, or TorchScript node names such
//     as "/model/layers.0/attn/MatMul"): a block ends right after the first numbered component
//     of a path ("model.layers.3", "transformer.h.0", "layer1.2": the entries of a ModuleList or
//     Sequential, what checkpoint_sequential splits); when no path has one, each top-level module
//     is a block ("stem", "block", "fc"). ConvNets, U-Nets and transformers whose norm is
//     decomposed (Mistral, Gemma) get their blocks from here;
//   * transformer layers: the spans between consecutive layer-boundary LayerNorms
//     (analysis/layer_boundary.h) in the forward order, the last as long as the one before it.
// For every stashed node inside a block except the block's outputs (read by forward nodes outside
// it: the next block's input), the plan clones its ancestors inside the block (execution order,
// the node last); values from outside the block (its input, weights, the attention mask) are read
// as they are, so the block input stays stashed. Clones shared between plans are made once
// (rewrite/rewrite_spec.h), so each block's forward runs again once, before its first backward
// reader.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "analysis/scan.h"
#include "ir/graph.h"

namespace memopt {

/// Per node id, the block its forward node belongs to ("" for none, and for backward nodes), and
/// where the blocks came from: "modules", "layer boundaries", or "" when the graph has none.
struct CheckpointBlocks {
  std::vector<std::string> key;
  std::string source;
};
CheckpointBlocks FindCheckpointBlocks(const Graph& graph, const ScanResult& scan);

/// `scan` with its plans replaced by the per-block checkpoint plans (reverse execution order of
/// their entries, as ScanResult::plans); no plans when the graph has no blocks. Their cluster ids
/// are "checkpoint(<block>)".
ScanResult LayerCheckpointScan(const Graph& graph, const ScanResult& scan);

/// True for the cluster id of a checkpoint plan, "checkpoint(<block>)".
bool IsCheckpointCluster(std::string_view cluster_id);

/// `scan` with the checkpoint plans added to its own, so that the budget planner can choose them
/// one by one (memopt's model, plan --checkpoints on) and a config can name them
/// ("checkpoint(model.layers.0):1:-1"; ONNX Runtime ignores the id). ScanResult::plans order is
/// kept (reverse execution order of the entries; a node's own plans before its checkpoint plan);
/// a checkpoint plan that recomputes exactly what the node's own type-1 plan does is left out.
/// The groups (the scan's table) are unchanged.
ScanResult WithCheckpointPlans(const Graph& graph, const ScanResult& scan);

}  // namespace memopt
