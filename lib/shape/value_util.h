// Helpers for value propagation over small tensors with constant shapes: index maps for
// broadcasting, and facts about symbolic element values.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "ir/dtype.h"
#include "sym/sym_expr.h"

namespace memopt::shape {

/// Largest tensor whose element values are tracked.
inline constexpr int64_t kMaxValueElements = 4096;

/// The dims when all are constant (and the element count is at most kMaxValueElements).
std::optional<std::vector<int64_t>> SmallConstDims(const Shape& shape);
/// Row-major strides of dims.
std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& dims);
/// True when `in` broadcasts to `out` (numpy rules, `in` no longer than `out`).
bool BroadcastsTo(const std::vector<int64_t>& in, const std::vector<int64_t>& out);
/// For each flat index of `out`, the flat index of the element of `in` (broadcast to `out`,
/// numpy rules) that it reads. Requires BroadcastsTo(in, out).
std::vector<int64_t> BroadcastIndexMap(const std::vector<int64_t>& out, const std::vector<int64_t>& in);
/// True when the expression cannot be negative: a constant >= 0, a symbolic expression printed
/// without a minus sign (polynomials in dims with non-negative coefficients, and floor/ceil/Max/
/// Min atoms of such), or a polynomial c + sum(a_i * m_i) with every a_i >= 0 and c + sum(a_i) >= 0
/// (e.g. tgt_len - 1). Symbolic dims are taken to be >= 1, as ONNX Runtime's symbolic shape
/// inference takes them to be positive.
bool KnownNonNegative(const SymExpr& e);
/// Dtypes whose element values are tracked: integers, bool, and floating point types (whose
/// tracked values are always integral: they come from integer tensors, integral float constants,
/// and ops that keep integers integral; Div and Mod only propagate for integer outputs).
bool TracksValues(DataType t);

}  // namespace memopt::shape
