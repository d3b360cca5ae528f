// Inlines model-local functions (ModelProto.functions) into the main graph at load time, so that
// every subcommand sees the ops a function call stands for. PyTorch's dynamo exporter writes a
// whole model as one call of such a function, whose body calls one function per module.
//
// A call is a node whose (domain, op_type, overload) names a local function. It is replaced by
// the function's nodes with
//   * formal inputs and outputs bound to the call's actual names (omitted ones: "" for inputs, a
//     fresh name for outputs; an output that is a formal input becomes an Identity);
//   * every other name the body defines (node outputs, subgraph inputs and initializers) renamed
//     to a name unused in the model: kept as it is when free, else "<name>__<k>"; node names the
//     same way;
//   * attribute references (ref_attr_name) replaced by the call's attribute of that name or the
//     function's default (attribute_proto), and dropped when neither exists;
//   * calls inside the body (and inside subgraphs, in the main graph too) inlined recursively;
//   * the function's value_info added to the graph's under the new names, and its opset imports
//     added to the model's (a different version of an imported domain is a warning: the nodes are
//     read with the model's version).
// Recursive functions and bodies that read names they neither receive nor compute are errors.
#pragma once

#include <string>
#include <vector>

#include "io/model_walk.h"
#include "util/status.h"

namespace memopt::io {

struct InlineStats {
  int calls = 0;                       ///< function calls replaced (nested ones included)
  std::vector<std::string> functions;  ///< "domain:name" of each function inlined, sorted
  std::vector<std::string> warnings;
};

/// Inlines every call of `raw.functions` in `raw.graph` and fills raw.graph.node_modules (the
/// PyTorch module of each node, io/torch_module_names.h).
Expected<InlineStats> InlineLocalFunctions(RawModel& raw);

}  // namespace memopt::io
