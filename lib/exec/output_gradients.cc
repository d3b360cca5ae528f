#include "exec/output_gradients.h"

#include <set>

#include "exec/random_inputs.h"

namespace memopt {

Expected<OutputGradMode> ParseOutputGradMode(const std::string& text) {
  if (text == "random") return OutputGradMode::kRandom;
  if (text == "ones") return OutputGradMode::kOnes;
  return UsageError("unknown --output-grads '" + text + "'; use ones or random");
}

Expected<int> YieldInputForOutput(const Node& yield, size_t j) {
  const std::vector<int64_t> listed = yield.GetInts("non_differentiable_outputs");
  const std::set<int64_t> nondiff(listed.begin(), listed.end());
  size_t seen = 0;
  for (size_t i = 0; i < yield.inputs.size(); ++i) {
    if (nondiff.count(static_cast<int64_t>(i)) != 0) continue;
    if (seen++ == j) return static_cast<int>(i);
  }
  return InvalidInput("node " + yield.Describe() + ": has " + std::to_string(yield.outputs.size()) +
                      " outputs but only " + std::to_string(seen) + " differentiable inputs");
}

std::string YieldGradientName(const Node& yield, const Graph* graph, size_t j) {
  return graph != nullptr ? graph->value(yield.outputs[j]).name : "yield_output_" + std::to_string(j);
}

std::map<std::string, std::string> YieldGradientNames(const Graph& graph) {
  std::map<std::string, std::string> names;
  for (const Node& node : graph.nodes) {
    if (node.op_type != "YieldOp" || node.domain != "com.microsoft") continue;
    for (size_t j = 0; j < node.outputs.size(); ++j) {
      if (node.outputs[j] == kNone) continue;
      const std::string& gradient = graph.value(node.outputs[j]).name;
      names.emplace(gradient, gradient);
      auto input = YieldInputForOutput(node, j);
      if (input.ok() && node.inputs[static_cast<size_t>(*input)] != kNone) {
        names.emplace(graph.value(node.inputs[static_cast<size_t>(*input)]).name + "_grad", gradient);
      }
    }
  }
  return names;
}

Expected<Tensor> IncomingGradient(const std::string& gradient_name, const Tensor& forward, uint64_t seed,
                                  const OutputGradients& options) {
  const std::string what = "incoming gradient '" + gradient_name + "'";
  if (auto it = options.given.find(gradient_name); it != options.given.end()) {
    if (it->second.dtype() != forward.dtype() || it->second.shape() != forward.shape()) {
      return InvalidInput(what + " is " + it->second.Describe() + "; the output it is the gradient of is " +
                          forward.Describe());
    }
    return it->second;
  }
  MEMOPT_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(forward.dtype(), forward.shape(), what));
  if (!IsFloatingPoint(forward.dtype())) return t;  // integer outputs carry no gradient: zeros
  if (t.numel() == 1 || options.mode == OutputGradMode::kOnes) {
    for (int64_t i = 0; i < t.numel(); ++i) t.SetFromDouble(i, 1.0);
  } else {
    FillUniform(t, seed, gradient_name);
  }
  return t;
}

}  // namespace memopt
