// The gradient rules of the op families that have not moved to lib/ops/<family> yet: their
// grad/rules_*.cc registration functions, copied into the op registry. A family that moves
// registers its rule in its own op file and leaves this list.
#include "grad/grad_context.h"
#include "ir/op_registry.h"

MEMOPT_OPS(legacy, grad_rules) {
  memopt::grad::GradRuleMap r;
  memopt::grad::RegisterElementwiseGradRules(r);
  memopt::grad::RegisterActivationGradRules(r);
  memopt::grad::RegisterMatMulGradRules(r);
  memopt::grad::RegisterNnGradRules(r);
  memopt::grad::RegisterShapeGradRules(r);
  memopt::grad::RegisterReduceGradRules(r);
  memopt::grad::RegisterLossGradRules(r);
  for (const auto& [key, info] : r) ops.SetGrad(key.first, key.second, info);
}
