// Checks that values given to symbolic dims (--dims batch=8) do not contradict the model: a
// dim the model pins elsewhere (a declared [3, 4] output of Relu(x[batch, 4]), a broadcast
// against a constant, a matmul inner dim) must not be bound to another value. Such a binding
// would make every size the tool reports wrong, so it is a usage error naming the tensor.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/graph.h"
#include "sym/sym_expr.h"
#include "util/status.h"

namespace memopt {

/// The value infos of `graph` as loaded (before InferShapes), indexed by ValueId.
std::vector<TensorInfo> DeclaredInfos(const Graph& graph);

/// `inferred` is the graph after InferShapes; `declared` its infos before (DeclaredInfos). Shapes
/// are re-inferred from the graph inputs with `dims` substituted and compared, dim by dim, with
/// the first inference under the same binding and with the declared shapes. The first value
/// whose concrete dims differ is an error (kUsage) naming the tensor, both shapes, and the node
/// that computes it. No dims: always ok. Cost: one more shape inference of the graph.
Status CheckDimBindings(const Graph& inferred, const std::vector<TensorInfo>& declared, const DimBindings& dims);

/// The largest byte count of one value that the peak estimate can add up with every other value
/// of `graph` without overflowing int64 (INT64_MAX / (values + 1)).
int64_t MaxCountableValueBytes(const Graph& graph);

/// Every value whose size is fully determined at `dims` (its dims constant or bound) must have a
/// byte count that fits MaxCountableValueBytes; otherwise it would silently count as unknown (0
/// bytes) and a peak gate could pass on it. The first such value is an error naming the tensor,
/// its shape and the dims: kUsage when a --dims value makes it overflow, kInvalidInput when the
/// model's own dims do.
Status CheckSizesAtDims(const Graph& graph, const DimBindings& dims);

}  // namespace memopt
