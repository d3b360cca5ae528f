// Seeded random values for the graph inputs a run was not given (memopt run / bench):
//   * floating inputs: uniform in [-1, 1);
//   * integer inputs: in [0, data.shape[axis]) when used as Gather indices, in [0, C) when used
//     as the labels of a loss op (C = number of classes), otherwise in [0, 2);
//   * bool inputs: 0 or 1.
// Integer uses are followed through shape-only ops (Reshape, Unsqueeze, Cast, ...). Symbolic
// input dims must be bound in `dims`; an unbound one is a usage error naming it.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "exec/tensor.h"
#include "ir/graph.h"
#include "sym/sym_expr.h"
#include "util/status.h"

namespace memopt {

/// The concrete shape of graph input `value` at `dims` (error naming the input and the dim when a
/// dim is unbound or the rank is unknown).
Expected<std::vector<int64_t>> ConcreteInputShape(const Graph& graph, ValueId value, const DimBindings& dims);

/// [lo, hi) range for random integers fed to `value`, from how the graph uses it.
std::pair<int64_t, int64_t> IntegerInputRange(const Graph& graph, ValueId value, const DimBindings& dims);

/// Fills floating-point `t` with uniform values in [-1, 1), deterministic for (seed, name).
void FillUniform(Tensor& t, uint64_t seed, const std::string& name);

/// A random tensor for graph input `value` (deterministic for a given seed and input name).
Expected<Tensor> RandomInput(const Graph& graph, ValueId value, const DimBindings& dims, uint64_t seed);

/// Feeds for every graph input without an initializer: `given` where present (by name), random
/// values for the rest.
Expected<std::map<std::string, Tensor>> CompleteFeeds(const Graph& graph, const std::map<std::string, Tensor>& given,
                                                      const DimBindings& dims, uint64_t seed);

}  // namespace memopt
