#include "shape/rule_registry.h"

namespace memopt::shape {

const OpDef* FindShapeRule(std::string_view domain, std::string_view op) {
  return Ops().Find(domain, op, [](const OpDef& def) { return def.shape != nullptr; });
}

}  // namespace memopt::shape
