// Lookups of gradient rules in the op registry.
#include <algorithm>

#include "grad/grad_builder.h"
#include "grad/grad_context.h"
#include "ir/op_registry.h"

namespace memopt {
namespace grad {

const GradRuleInfo* FindGradRule(const Node& node) {
  const OpDef* def = Ops().Find(node.domain, node.op_type, [](const OpDef& d) { return d.grad.rule != nullptr; });
  return def == nullptr ? nullptr : &def->grad;
}

std::vector<std::string> RegisteredGradOps() {
  std::vector<std::string> ops;
  for (const auto& [key, def] : Ops().defs()) {
    if (def.grad.rule != nullptr) ops.push_back(key.ToString());
  }
  std::sort(ops.begin(), ops.end());
  return ops;
}

}  // namespace grad

std::vector<std::string> GradientOps() { return grad::RegisteredGradOps(); }

}  // namespace memopt
