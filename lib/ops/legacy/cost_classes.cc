// The cost classes of the op families that have not moved to lib/ops/<family> yet, by op type
// (plan/cost_model.cc counts their work). A family that moves sets its cost classes in its own op
// file and leaves this list.
#include <string_view>

#include "ir/op_registry.h"

MEMOPT_OPS(legacy, cost_classes) {
  using memopt::CostKind;
  for (std::string_view op : {"MatMul", "FusedMatMul", "MatMulInteger", "TransposeMatMul"}) {
    ops.SetCostForOpType(op, {CostKind::kMatMul});
  }
  ops.SetCostForOpType("Gemm", {CostKind::kGemm});
  ops.SetCostForOpType("Conv", {CostKind::kConv});
  ops.SetCostForOpType("ConvTranspose", {CostKind::kConvTranspose});
  for (std::string_view op : {"MaxPool", "AveragePool", "LpPool"}) ops.SetCostForOpType(op, {CostKind::kPool});
  for (std::string_view op : {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
                              "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare", "ArgMax", "ArgMin",
                              "ReduceSumTraining", "GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool"}) {
    ops.SetCostForOpType(op, {CostKind::kReduce});
  }
  for (std::string_view op : {"Exp", "Log", "Tanh", "Sigmoid", "Erf", "Softplus", "Softsign", "Sin", "Cos",
                              "HardSigmoid", "Elu", "Selu", "Celu", "Mish", "HardSwish", "Swish", "QuickGelu", "Pow"}) {
    ops.SetCostForOpType(op, {CostKind::kElementwise, 4});
  }
  // Arithmetic, comparison and simple activations: one FLOP per output element.
  for (std::string_view op : {"Add",
                              "Sub",
                              "Mul",
                              "Div",
                              "Neg",
                              "Abs",
                              "Sqrt",
                              "Reciprocal",
                              "Floor",
                              "Ceil",
                              "Sign",
                              "Relu",
                              "LeakyRelu",
                              "PRelu",
                              "ThresholdedRelu",
                              "Clip",
                              "Max",
                              "Min",
                              "Sum",
                              "Mean",
                              "Where",
                              "Equal",
                              "Less",
                              "Greater",
                              "LessOrEqual",
                              "GreaterOrEqual",
                              "Not",
                              "And",
                              "Or",
                              "CumSum"}) {
    ops.SetCostForOpType(op, {CostKind::kElementwise, 1});
  }
  for (std::string_view op : {"Softmax", "LogSoftmax", "SoftmaxGrad", "SoftmaxGrad_13"}) {
    ops.SetCostForOpType(op, {CostKind::kElementwise, 5});
  }
  ops.SetCostForOpType("BiasSoftmax", {CostKind::kElementwise, 6});
  for (std::string_view op : {"Gelu", "FastGelu", "BiasGelu", "BiasFastGelu", "GeluGrad", "FastGeluGrad",
                              "BiasGeluGrad_dX", "GroupNorm", "InstanceNormalization", "BatchNormalization"}) {
    ops.SetCostForOpType(op, {CostKind::kElementwise, 8});
  }
  ops.SetCostForOpType("BiasSoftmaxDropout", {CostKind::kElementwise, 3});
  for (std::string_view op :
       {"Transpose", "Cast",     "Expand",          "Tile",         "Concat",    "ConcatTraining",
        "Slice",     "Gather",   "GatherElements",  "GatherND",     "Split",     "SplitTraining",
        "Pad",       "Constant", "ConstantOfShape", "Range",        "ScatterND", "ScatterElements",
        "Trilu",     "OneHot",   "DepthToSpace",    "SpaceToDepth", "Resize",    "CastLike",
        "EyeLike"}) {
    ops.SetCostForOpType(op, {CostKind::kMove});
  }
  for (std::string_view op : {"Reshape", "Squeeze", "Unsqueeze", "Flatten", "Identity", "Shape", "Size"}) {
    ops.SetCostForOpType(op, {CostKind::kView});
  }
  ops.SetCostForOpType("Einsum", {CostKind::kEinsum});
  for (std::string_view op : {"MemcpyFromHost", "MemcpyToHost", "FlattenAndUnpad", "PadAndUnflatten"}) {
    ops.SetCostForOpType(op, {CostKind::kMove});
  }
  // Work that depends on the data (NonZero) or on Python code (PythonOp): one FLOP per output
  // element.
  for (std::string_view op : {"NonZero", "PythonOp"}) ops.SetCostForOpType(op, {CostKind::kElementwise, 1});
}
