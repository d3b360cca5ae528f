// How reports show the PyTorch module a node belongs to (Node::module, from the exporter's
// metadata or the model-local function it was inlined from; io/torch_module_names.h).
#pragma once

#include <string>

#include "ir/graph.h"

namespace memopt {

/// " in <module>" when the node's module is known, else "".
inline std::string InModule(const Node& node) { return node.module.empty() ? std::string() : " in " + node.module; }

/// True when some node of `graph` has a module (reports add a module column only then).
inline bool HasModules(const Graph& graph) {
  for (const Node& n : graph.nodes) {
    if (!n.module.empty()) return true;
  }
  return false;
}

}  // namespace memopt
