// Checks the tensors fed to a run against the model's declared graph inputs (element type, rank,
// concrete dims, and one value per symbolic dim across all inputs).
#pragma once

#include <map>
#include <string>
#include <utility>

#include "exec/tensor.h"
#include "ir/graph.h"
#include "util/status.h"

namespace memopt {

/// Symbolic dims bound so far: name -> (value, input that bound it, or "--dims").
using BoundDims = std::map<std::string, std::pair<int64_t, std::string>>;

/// Checks `feed` for graph input (or initializer) `value`. Errors name the input:
/// "input 'x': expected float, got int64", "input 'x': rank 2 expected, got 3",
/// "input 'x': dim 1 is 784 in the model, got 100",
/// "input 'y': dim 0 is 'batch' = 4 (from input 'x'), got 5".
Status CheckFeed(const Graph& graph, ValueId value, const Tensor& feed, BoundDims& bound);

/// Binds the symbolic dims of the graph inputs from the fed shapes (dims that are a plain
/// symbol). Feeds that are not graph inputs or do not match the declared rank are ignored.
DimBindings DimsFromFeeds(const Graph& graph, const std::map<std::string, Tensor>& feeds);

}  // namespace memopt
