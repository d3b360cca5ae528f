// OpDef: everything memopt knows about one op, in one record keyed by OpKey. Each layer reads its
// part through the op registry (ir/op_registry.h): shape inference the shape and value rules, the
// CPU executor the kernel, the gradient builder the gradient rule and the outputs it saves, the
// planner the cost class. The CUDA backend keys its kernels by the same OpKey (cuda/cuda_kernel.h).
//
// The function types name their contexts by forward declaration only, so this header sits below
// every layer that implements them.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "ir/dtype.h"
#include "ir/op_key.h"
#include "util/status.h"

namespace memopt {

class Graph;
struct KernelContext;
namespace shape {
class InferContext;
}
namespace grad {
class NodeGrad;
}

/// Shape rule (dtypes and shapes of the outputs) or value rule (element values of small integer
/// outputs) of shape inference.
using ShapeRuleFn = Status (*)(shape::InferContext&);

/// A CPU kernel: one node's outputs from its inputs (exec/kernel.h has the context).
using KernelFn = Status (*)(KernelContext& ctx);

struct KernelInfo {
  KernelInfo() = default;
  KernelInfo(KernelFn fn_in, std::vector<DataType> types_in = {}) : fn(fn_in), types(std::move(types_in)) {}

  KernelFn fn = nullptr;
  /// Element types this kernel handles for its main input (empty: every type). Used by the
  /// conformance runner to report "unsupported data type" as skipped instead of failed.
  std::vector<DataType> types;
  /// For kernels that draw random numbers: true when this call's result is random (e.g. Dropout in
  /// training mode with ratio > 0). Reference results from another generator (the ONNX node tests
  /// use numpy's) cannot match, so the conformance runner reports such cases as skipped. nullptr:
  /// never random. Evaluated with ctx.inputs bound and ctx.outputs empty.
  bool (*is_random)(const KernelContext& ctx) = nullptr;
  /// For ops whose support depends on the node (ATen's `operator` attribute): "" when this node can
  /// run, else what is missing (e.g. "operator 'foo'"). nullptr: every node can run.
  std::string (*node_check)(const Node& node) = nullptr;
};

using GradRuleFn = Status (*)(grad::NodeGrad& g);

/// A forward output the gradient rule reads, which the gradient builder adds to the forward node
/// when the export left it out (LayerNormalization's saved mean, Dropout's mask, ...).
struct SavedOutput {
  SavedOutput(int index_in, std::string suffix_in, bool after_input0_in = false,
              bool (*when_in)(const Graph&, const Node&) = nullptr)
      : index(index_in), suffix(std::move(suffix_in)), after_input0(after_input0_in), when(when_in) {}

  int index = 0;
  /// The added output is named after the node's first output plus this suffix ("_mask"), or, with
  /// `after_input0`, after its first input ("_log_prob").
  std::string suffix;
  bool after_input0 = false;
  /// When set, the output is added only where this says so (Dropout: only in training mode).
  bool (*when)(const Graph& graph, const Node& node) = nullptr;
};

struct GradInfo {
  GradInfo() = default;
  GradInfo(GradRuleFn rule_in, std::vector<int> stop_inputs_in = {}, std::vector<SavedOutput> saved_outputs_in = {})
      : rule(rule_in), stop_inputs(std::move(stop_inputs_in)), saved_outputs(std::move(saved_outputs_in)) {}

  GradRuleFn rule = nullptr;
  /// Input indices that never receive a gradient (ORT's STOP_GRADIENT_EDGES and the like).
  std::vector<int> stop_inputs;
  std::vector<SavedOutput> saved_outputs;
};

/// How the planner's cost model counts an op's work (plan/cost_model.cc).
enum class CostKind {
  kNone, kMatMul, kGemm, kConv, kConvTranspose, kPool, kReduce, kEinsum, kElementwise, kMove, kView
};

struct CostClass {
  CostKind kind = CostKind::kNone;  ///< kNone: no class (costed as 1 FLOP per output element)
  int factor = 1;                   ///< FLOPs per output element (kElementwise)
};

struct OpDef {
  OpKey key;
  ShapeRuleFn shape = nullptr;
  ShapeRuleFn values = nullptr;
  KernelInfo cpu;  ///< cpu.fn == nullptr: no CPU kernel
  std::string cpu_file;  ///< the op file that registered `cpu` ("<family>/<file>", e.g. "reduce/reduce_cpu")
  GradInfo grad;   ///< grad.rule == nullptr: no gradient rule
  CostClass cost;
};

}  // namespace memopt
