// "Did you mean" hints: the closest name by edit distance.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace memopt {

/// Closest candidate by edit distance (for "did you mean" hints); empty when none is close.
std::string ClosestMatch(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace memopt
