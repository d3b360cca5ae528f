// Replaces each If whose condition shape inference knows by the nodes of the branch it takes.
// PyTorch's dynamo exporter (onnxscript's torch_lib) guards many ops with an If on a shape fact,
// e.g. If(Size(repeats) == 0); after function inlining such conditions are constants. Neither
// executor runs subgraphs, and the analysis sees through the branch only once it is spliced in.
//
// The branch's nodes are inserted where the If was (names it defines that the graph already uses
// get "__<k>" suffixes), and an Identity per If output copies the branch output. Ifs whose
// condition is unknown, or whose branch has initializers, stay. Folding repeats while nested Ifs
// become foldable.
#pragma once

#include "ir/graph.h"
#include "util/status.h"

namespace memopt {

/// Folds every If with a known condition in `graph`; returns how many were folded.
Expected<int> FoldKnownIfs(Graph& graph);

}  // namespace memopt
