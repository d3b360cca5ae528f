// The kernel interface of the executor. A kernel computes one node's outputs from its inputs on
// the CPU; the CUDA backend (cuda/) registers kernels for the same (domain, op) keys later.
//
// Kernels are registered in the op registry by the files that define them (lib/ops/<family>/*_cpu.cc,
// each with MEMOPT_OPS; CMake generates the call list, so no static-initialiser magic that a static
// library would drop); KernelRegistry::Cpu() is the executor's view of them.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "exec/output_gradients.h"
#include "exec/tensor.h"
#include "ir/graph.h"
#include "ir/op_def.h"
#include "util/status.h"

namespace memopt {

struct KernelContext {
  const Node* node = nullptr;
  /// One entry per node input; nullptr for an omitted optional input.
  std::vector<const Tensor*> inputs;
  /// One entry per node output, default-constructed; the kernel assigns the outputs it produces.
  /// An output whose name is empty (omitted) may be left undefined.
  std::vector<Tensor> outputs;
  /// Seed of this run (memopt run --seed); Dropout-family ops with a `seed` attribute ignore it.
  uint64_t run_seed = 0;
  /// The graph being run (may be nullptr, e.g. in unit tests). For the few kernels whose output
  /// shape is not a function of their inputs (MaxPoolGrad, AveragePoolGrad: the forward X shape),
  /// which read the statically inferred shape of their output value, like ORT does.
  const Graph* graph = nullptr;
  /// Incoming gradients for the YieldOp (nullptr: the defaults of OutputGradients).
  const OutputGradients* output_grads = nullptr;

  int num_inputs() const { return static_cast<int>(inputs.size()); }
  bool has_input(int i) const { return i < num_inputs() && inputs[i] != nullptr; }
  const Tensor& input(int i) const { return *inputs[i]; }
  bool output_wanted(int i) const { return i < static_cast<int>(node->outputs.size()) && node->outputs[i] != kNone; }
  /// Error naming the node: "node 'x' (Op): <message>".
  Status Error(const std::string& message) const;
};

class KernelRegistry {
 public:
  /// The registry with every built-in CPU kernel (the CPU kernels of the op registry).
  static const KernelRegistry& Cpu();

  /// domain "" = ai.onnx; "com.microsoft" for contrib/training ops.
  void Register(const std::string& domain, const std::string& op, KernelFn fn, std::vector<DataType> types = {});
  /// Registers a whole entry (KernelRegistry::Cpu() copies the op registry's CPU kernels).
  void Register(const OpKey& key, KernelInfo info) { kernels_[{key.domain, key.op}] = std::move(info); }
  /// The kernel of `domain::op`, trying the fallback domain of op_key.h on a miss.
  const KernelInfo* Find(const std::string& domain, const std::string& op) const;
  /// Every entry, by (normalised domain, op).
  const std::map<std::pair<std::string, std::string>, KernelInfo>& entries() const { return kernels_; }
  /// "op" or "domain::op", sorted.
  std::vector<std::string> OpNames() const;

 private:
  std::map<std::pair<std::string, std::string>, KernelInfo> kernels_;
};

}  // namespace memopt
