#include "util/closest_match.h"

#include <algorithm>

namespace memopt {

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
