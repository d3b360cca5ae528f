// The cost classes of the elementwise ops, by op type: one class for every domain's op of that
// name. plan/cost_model.cc counts their work from it.
#include "ir/op_registry.h"

MEMOPT_OPS(elementwise, costs) {
  using memopt::CostKind;
  // Transcendental functions and the activations built on them: about four FLOPs per element.
  for (const char* op : {"Exp", "Log", "Tanh", "Sigmoid", "Erf", "Softplus", "Softsign", "Sin", "Cos", "HardSigmoid", "Elu", "Selu", "Celu", "Mish", "HardSwish", "Swish", "QuickGelu", "Pow"}) {
    ops.SetCostForOpType(op, {CostKind::kElementwise, 4});
  }
  // Arithmetic, comparison and simple activations: one FLOP per output element.
  for (const char* op : {"Add", "Sub", "Mul", "Div", "Neg", "Abs", "Sqrt", "Reciprocal", "Floor", "Ceil", "Sign", "Relu", "LeakyRelu", "PRelu", "ThresholdedRelu", "Clip", "Max", "Min", "Sum", "Mean", "Where", "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "Not", "And", "Or", "CumSum"}) {
    ops.SetCostForOpType(op, {CostKind::kElementwise, 1});
  }
  // Conversions and the lower triangle copy move bytes.
  for (const char* op : {"Cast", "CastLike", "Trilu"}) {
    ops.SetCostForOpType(op, {CostKind::kMove});
  }
}
