// DimBindings parsing ("batch=8,seq_len=512") and the "did you mean" helper for dim names.
#include <algorithm>
#include <vector>

#include "sym/sym_expr.h"

namespace memopt {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::string Quote(std::string_view s) { return "'" + std::string(s) + "'"; }

}  // namespace

std::optional<int64_t> DimBindings::Get(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

Expected<DimBindings> DimBindings::Parse(std::string_view text) {
  DimBindings dims;
  if (Trim(text).empty()) return dims;
  size_t start = 0;
  while (true) {
    size_t comma = text.find(',', start);
    std::string_view raw = text.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    std::string_view piece = Trim(raw);
    size_t sep = piece.find_first_of("=:");
    if (sep == std::string_view::npos || Trim(piece.substr(0, sep)).empty()) {
      return UsageError("malformed --dims entry " + Quote(piece) + ": expected name=value");
    }
    std::string name(Trim(piece.substr(0, sep)));
    std::string_view value = Trim(piece.substr(sep + 1));
    bool digits = !value.empty() && std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (!digits) {
      return UsageError("invalid value " + Quote(value) + " for dim '" + name +
                        "' in --dims: expected a non-negative integer");
    }
    int64_t v = 0;
    for (char c : value) {
      if (__builtin_mul_overflow(v, int64_t{10}, &v) || __builtin_add_overflow(v, int64_t{c - '0'}, &v)) {
        return UsageError("value " + Quote(value) + " for dim '" + name + "' in --dims does not fit in 64 bits");
      }
    }
    if (dims.values_.count(name)) return UsageError("dim '" + name + "' is given twice in --dims");
    dims.values_[name] = v;
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return dims;
}


std::optional<Rational> EvaluateWithDefault(const SymExpr& expr, const DimBindings& dims, int64_t unbound_value) {
  DimBindings all = dims;
  for (const std::string& name : expr.Symbols()) {
    if (!dims.Get(name).has_value()) all.Set(name, unbound_value);
  }
  Expected<Rational> value = expr.Evaluate(all);
  if (!value.ok()) return std::nullopt;
  return *value;
}

}  // namespace memopt
