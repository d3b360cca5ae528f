// The table of gradient rules: (domain, op) -> rule and stop edges. Each rules_*.cc file
// registers one op family.
#include <algorithm>

#include "grad/grad_builder.h"
#include "grad/grad_context.h"

namespace memopt {
namespace grad {
namespace {

const GradRuleMap& Rules() {
  static const GradRuleMap rules = [] {
    GradRuleMap r;
    RegisterElementwiseGradRules(r);
    RegisterActivationGradRules(r);
    RegisterMatMulGradRules(r);
    RegisterNnGradRules(r);
    RegisterShapeGradRules(r);
    RegisterReduceGradRules(r);
    RegisterLossGradRules(r);
    return r;
  }();
  return rules;
}

}  // namespace

const GradRuleInfo* FindGradRule(const Node& node) {
  const std::string domain = node.domain == "ai.onnx" ? std::string() : node.domain;
  auto it = Rules().find({domain, node.op_type});
  return it == Rules().end() ? nullptr : &it->second;
}

std::vector<std::string> RegisteredGradOps() {
  std::vector<std::string> ops;
  for (const auto& [key, info] : Rules()) ops.push_back(key.first.empty() ? key.second : key.first + "::" + key.second);
  std::sort(ops.begin(), ops.end());
  return ops;
}

}  // namespace grad

std::vector<std::string> GradientOps() { return grad::RegisteredGradOps(); }

}  // namespace memopt
