// The shape and value rules of the op families that have not moved to lib/ops/<family> yet: their
// shape/rules_*.cc registration functions. A family that moves registers its rules in its own op
// file and leaves this list.
#include "ir/op_registry.h"
#include "shape/rule_registry.h"

MEMOPT_OPS(legacy, shape_rules) {
  memopt::shape::RuleRegistry r(ops);
  memopt::shape::RegisterElementwiseRules(r);
  memopt::shape::RegisterTensorRules(r);
  memopt::shape::RegisterIndexRules(r);
  memopt::shape::RegisterGeneratorRules(r);
  memopt::shape::RegisterReduceRules(r);
  memopt::shape::RegisterMatMulRules(r);
  memopt::shape::RegisterNnRules(r);
  memopt::shape::RegisterTrainingRules(r);
  memopt::shape::RegisterGradRules(r);
  memopt::shape::RegisterValueRules(r);
}
