// The seed of a Dropout-family node, shared by the CPU reference (ops/dropout/dropout_cpu.cc) and
// the CUDA kernels (cuda/ops/dropout/dropout.cc) so that both executors draw the same masks.
#pragma once

#include <cstdint>
#include <string_view>

#include "exec/philox.h"
#include "ir/graph.h"

namespace memopt {

/// The `seed` attribute when present, otherwise `run_seed` mixed with the name of the node's first
/// output in `graph` (the node name when it has none, or without a graph). Trailing "_recompute" and "_recompute_<n>" suffixes are removed,
/// so a recompute clone without a seed attribute still draws the forward node's mask.
inline uint64_t NodeDropoutSeed(const Node& node, const Graph* graph, uint64_t run_seed) {
  if (node.HasAttr("seed")) return DropoutSeedFromAttribute(node.GetInt("seed", 0));
  std::string_view name;
  if (graph != nullptr && !node.outputs.empty() && node.outputs[0] != kNone) name = graph->value(node.outputs[0]).name;
  if (name.empty()) name = node.name;
  constexpr std::string_view kSuffix = "_recompute";
  for (;;) {  // "_recompute", or "_recompute_<n>" (the further copies of a split plan)
    std::string_view rest = name;
    while (!rest.empty() && rest.back() >= '0' && rest.back() <= '9') rest.remove_suffix(1);
    if (rest.size() < name.size() && !rest.empty() && rest.back() == '_') {
      rest.remove_suffix(1);
    } else {
      rest = name;
    }
    if (rest.size() <= kSuffix.size() || rest.substr(rest.size() - kSuffix.size()) != kSuffix) break;
    name = rest.substr(0, rest.size() - kSuffix.size());
  }
  return DropoutSeedFromName(run_seed, name);
}

}  // namespace memopt
