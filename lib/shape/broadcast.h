// Numpy-style (multidirectional) broadcasting of symbolic shapes.
//
// Per aligned dim pair (a, b), right-aligned, missing leading dims count as 1:
//   a == b                        -> a
//   a is the literal 1            -> b        (and symmetrically)
//   a constant != 1, b symbolic   -> a        (b must equal a at run time, or be 1)
//   both constant, different      -> conflict (the model is invalid or a dim is wrong)
//   two different symbolic dims   -> Max(a, b): at run time they are equal unless one is 1, and
//                                    then the result is the other, so Max is exact for dims >= 1.
//                                    The pair is recorded in BroadcastNotes so that a declared dim
//                                    equal to a or b resolves it (shape_infer.cc). Operands
//                                    already inside such a Max are absorbed: Max(Max(a, b), b)
//                                    stays Max(a, b).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "shape/infer_context.h"
#include "sym/sym_expr.h"

namespace memopt::shape {

struct BroadcastResult {
  Shape shape;
  /// "dim 2: 3 vs 4" for each pair of different constants (neither 1); empty when compatible.
  std::vector<std::string> conflicts;
};

/// Broadcasts two dims. Sets *conflict when both are constants, different and neither is 1
/// (the result is then the larger one).
SymExpr BroadcastDim(const SymExpr& a, const SymExpr& b, BroadcastNotes* notes, bool* conflict);

/// Broadcasts any number of shapes (at least one).
BroadcastResult BroadcastShapes(const std::vector<const Shape*>& shapes, BroadcastNotes* notes);

/// The rule-facing form: broadcasts the shapes of the given inputs; an absent input or an input
/// of unknown rank makes the result unknown (nullopt). Conflicts are recorded as diagnostics on
/// output 0.
std::optional<Shape> BroadcastInputs(InferContext& ctx, const std::vector<size_t>& inputs);

}  // namespace memopt::shape
