// Reads symbolic dim names that are really expressions. Exporters (torch.onnx, ORT) write derived
// dims as dim_param strings in sympy syntax, e.g. "16*inputs_input_ids_dim0" or
// "inputs_input_ids_dim0*(inputs_attention_mask_dim1 - 1)"; the loader keeps each as one opaque
// symbol. Parsing them lets inferred dims be compared with declared ones.
#pragma once

#include <optional>
#include <string_view>

#include "sym/sym_expr.h"

namespace memopt::shape {

/// Parses `text` when it looks like an expression (it contains '*', '+', '/', '(' or " - ") and
/// parses completely: integers, identifiers ([A-Za-z_][A-Za-z0-9_.]*), + - * / ** and
/// parentheses, and the functions floor, ceiling, Max, Min, Mod. '/' must divide exactly
/// (polynomial with integer coefficients). nullopt for plain names and anything else.
std::optional<SymExpr> ParseDimExpression(std::string_view text);

/// `dim` with a bare symbol whose name is an expression replaced by the parsed expression.
SymExpr NormalizeDeclaredDim(const SymExpr& dim);

}  // namespace memopt::shape
