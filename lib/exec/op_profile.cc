#include "exec/op_profile.h"

#include <algorithm>

#include "ir/op_key.h"

namespace memopt {

void OpProfile::Add(const Node& node, double ms) {
  const std::string key = OpKey(node.domain, node.op_type).ToString();
  OpTime& t = by_op_[key];
  t.op = key;
  t.nodes += 1;
  t.ms += ms;
}

std::vector<OpTime> OpProfile::PerStep() const {
  std::vector<OpTime> rows;
  const double runs = runs_ > 0 ? runs_ : 1;
  for (const auto& [key, t] : by_op_) {
    OpTime row = t;
    row.nodes = static_cast<int64_t>(static_cast<double>(t.nodes) / runs + 0.5);
    row.ms = t.ms / runs;
    rows.push_back(row);
  }
  // by_op_ iterates by name, so a stable sort leaves ties in name order.
  std::stable_sort(rows.begin(), rows.end(), [](const OpTime& a, const OpTime& b) { return a.ms > b.ms; });
  return rows;
}

}  // namespace memopt
