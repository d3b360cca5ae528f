// Shape rules of Einsum and Det.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ir/op_registry.h"
#include "shape/broadcast.h"
#include "shape/rule_registry.h"

namespace memopt::shape {
namespace {

/// Einsum: letters take their dims from the inputs (a 1 yields to a larger dim), "..." dims are
/// broadcast; implicit output = "..." + letters seen once, sorted.
Status EinsumRule(InferContext& ctx) {
  std::string eq;
  for (char c : ctx.node().GetString("equation", "")) {
    if (c != ' ') eq += c;
  }
  const DataType dtype = ctx.InputType(0);
  const auto arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  std::vector<std::string> terms;
  size_t pos = 0;
  while (true) {
    const auto comma = lhs.find(',', pos);
    terms.push_back(lhs.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos));
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  if (terms.size() != ctx.NumInputs()) {
    ctx.Diagnose(ctx.OutputName(0), "Einsum equation '" + eq + "' does not match the number of inputs");
    ctx.SetOutput(0, dtype, std::nullopt);
    return Status::Ok();
  }
  std::map<char, SymExpr> dims;
  std::map<char, int> count;
  std::vector<Shape> ellipsis_parts;
  for (size_t i = 0; i < terms.size(); ++i) {
    const Shape* s = ctx.InputShape(i);
    if (s == nullptr) {
      ctx.SetOutput(0, dtype, std::nullopt);
      return Status::Ok();
    }
    const std::string& t = terms[i];
    const auto dots = t.find("...");
    const size_t letters = t.size() - (dots == std::string::npos ? 0 : 3);
    if (letters > s->size() || (dots == std::string::npos && letters != s->size())) {
      ctx.Diagnose(ctx.OutputName(0), "Einsum term '" + t + "' does not match input rank " + std::to_string(s->size()));
      ctx.SetOutput(0, dtype, std::nullopt);
      return Status::Ok();
    }
    const size_t ell = s->size() - letters;
    size_t dim = 0;
    for (size_t c = 0; c < t.size(); ++c) {
      if (dots != std::string::npos && c == dots) {
        ellipsis_parts.emplace_back(s->begin() + dim, s->begin() + dim + ell);
        dim += ell;
        c += 2;
        continue;
      }
      const char letter = t[c];
      ++count[letter];
      const SymExpr& d = (*s)[dim++];
      auto it = dims.find(letter);
      if (it == dims.end()) {
        dims.emplace(letter, d);
      } else {
        bool conflict = false;
        it->second = BroadcastDim(it->second, d, &ctx.broadcast_notes(), &conflict);
      }
    }
  }
  std::vector<const Shape*> parts;
  for (const Shape& p : ellipsis_parts) parts.push_back(&p);
  const Shape ellipsis = parts.empty() ? Shape{} : BroadcastShapes(parts, &ctx.broadcast_notes()).shape;
  Shape out;
  if (arrow == std::string::npos) {
    out = ellipsis;
    for (const auto& [letter, n] : count) {
      if (n == 1) out.push_back(dims[letter]);
    }
  } else {
    const std::string rhs = eq.substr(arrow + 2);
    for (size_t c = 0; c < rhs.size(); ++c) {
      if (rhs.compare(c, 3, "...") == 0) {
        out.insert(out.end(), ellipsis.begin(), ellipsis.end());
        c += 2;
      } else if (auto it = dims.find(rhs[c]); it != dims.end()) {
        out.push_back(it->second);
      } else {
        ctx.Diagnose(ctx.OutputName(0), std::string("Einsum output letter '") + rhs[c] + "' not in any input");
        ctx.SetOutput(0, dtype, std::nullopt);
        return Status::Ok();
      }
    }
  }
  ctx.SetOutput(0, dtype, std::move(out));
  return Status::Ok();
}

/// Det: batch dims of [*, M, M].
Status DetRule(InferContext& ctx) {
  const Shape* x = ctx.InputShape(0);
  ctx.SetOutput(0, ctx.InputType(0), x != nullptr && x->size() >= 2 ? std::optional<Shape>(Shape(x->begin(), x->end() - 2))
                                                                     : std::nullopt);
  return Status::Ok();
}

}  // namespace
}  // namespace memopt::shape

MEMOPT_OPS(matmul, linalg_shape) {
  using namespace memopt::shape;
  RuleRegistry r(ops);
  r.Add("", "Einsum", EinsumRule);
  r.Add("", "Det", DetRule);
}
