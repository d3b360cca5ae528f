#include "shape/rule_registry.h"

namespace memopt::shape {

namespace {

std::string Key(std::string_view domain, std::string_view op) {
  std::string key(domain == "ai.onnx" ? std::string_view() : domain);
  key += '\n';
  key += op;
  return key;
}

}  // namespace

void RuleRegistry::Add(std::string_view domain, std::string_view op, RuleFn shape) {
  rules_[Key(domain, op)].shape = shape;
}

void RuleRegistry::AddValues(std::string_view domain, std::string_view op, RuleFn values) {
  rules_[Key(domain, op)].values = values;
}

const OpRule* RuleRegistry::Find(std::string_view domain, std::string_view op) const {
  auto it = rules_.find(Key(domain, op));
  if (it != rules_.end()) return &it->second;
  std::string_view other;
  if (domain.empty() || domain == "ai.onnx") {
    other = kMsDomain;
  } else if (domain == kMsDomain) {
    other = "";
  } else {
    return nullptr;
  }
  it = rules_.find(Key(other, op));
  return it == rules_.end() ? nullptr : &it->second;
}

const RuleRegistry& BuiltinRules() {
  static const RuleRegistry* const registry = [] {
    auto* r = new RuleRegistry();
    RegisterElementwiseRules(*r);
    RegisterTensorRules(*r);
    RegisterIndexRules(*r);
    RegisterGeneratorRules(*r);
    RegisterReduceRules(*r);
    RegisterMatMulRules(*r);
    RegisterNnRules(*r);
    RegisterTrainingRules(*r);
    RegisterGradRules(*r);
    RegisterValueRules(*r);
    return r;
  }();
  return *registry;
}

}  // namespace memopt::shape
