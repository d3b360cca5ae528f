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

std::string ClosestMatch(std::string_view word, const std::vector<std::string>& candidates) {
  size_t limit = std::max<size_t>(1, word.size() / 3);
  size_t best_distance = limit + 1;
  std::string best;
  // Optimal-string-alignment distance (Levenshtein plus adjacent transpositions, so "sacn" is one
  // edit from "scan"), with three rolling rows.
  std::vector<size_t> prev2, prev, cur;
  for (const std::string& cand : candidates) {
    prev2.assign(cand.size() + 1, 0);
    prev.resize(cand.size() + 1);
    cur.resize(cand.size() + 1);
    for (size_t j = 0; j <= cand.size(); ++j) prev[j] = j;
    for (size_t i = 1; i <= word.size(); ++i) {
      cur[0] = i;
      for (size_t j = 1; j <= cand.size(); ++j) {
        size_t substitute = prev[j - 1] + (word[i - 1] == cand[j - 1] ? 0 : 1);
        cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, substitute});
        if (i > 1 && j > 1 && word[i - 1] == cand[j - 2] && word[i - 2] == cand[j - 1]) {
          cur[j] = std::min(cur[j], prev2[j - 2] + 1);
        }
      }
      std::swap(prev2, prev);
      std::swap(prev, cur);
    }
    size_t distance = prev[cand.size()];
    if (distance < best_distance) {
      best_distance = distance;
      best = cand;
    }
  }
  return best;
}

}  // namespace memopt
