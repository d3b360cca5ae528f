// The gradients a training step receives for its module outputs. In an ORTModule graph the
// YieldOp hands the forward outputs to PyTorch and returns their gradients; ORT never runs it.
// The executors (CPU and CUDA) seed the backward as `loss.backward()` would:
//   * a gradient given by the caller (`memopt run --inputs DIR/<output>_grad.pb`), by the
//     YieldOp output's name or as "<module output>_grad";
//   * else 1 for an output with one element (a scalar loss: d loss / d loss);
//   * else ones or seeded uniform values in [-1, 1) (`--output-grads ones|random`), random by
//     default; the same seed and names give the same values, so an original graph and its
//     rewrite receive identical gradients (apply --verify stays bit-identical).
// So the gradient outputs are d loss / d param, what PyTorch autograd reports (docs/grad.md).
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "exec/tensor.h"
#include "ir/graph.h"
#include "util/status.h"

namespace memopt {

enum class OutputGradMode { kRandom, kOnes };

struct OutputGradients {
  OutputGradMode mode = OutputGradMode::kRandom;
  /// Given gradients, by YieldOp output name (YieldGradientNames resolves the aliases).
  std::map<std::string, Tensor> given;
};

/// Parses "ones" / "random" (usage error naming the value otherwise).
Expected<OutputGradMode> ParseOutputGradMode(const std::string& text);

/// Every name a caller may give an incoming gradient under -> the YieldOp output it feeds: the
/// output's own name and "<module output>_grad" for the differentiable input it mirrors.
std::map<std::string, std::string> YieldGradientNames(const Graph& graph);

/// The differentiable YieldOp input that output `j` mirrors (inputs not listed in
/// non_differentiable_outputs, in order), or -1 with an error when there are too few.
Expected<int> YieldInputForOutput(const Node& yield, size_t j);

/// The name of YieldOp output `j` in `graph`, or "yield_output_<j>" without a graph (kernel tests):
/// what the random gradients are keyed by.
std::string YieldGradientName(const Node& yield, const Graph* graph, size_t j);

/// The incoming gradient for YieldOp output `gradient_name`, whose module output `forward` has
/// been computed (dtype and shape come from it), by the rules above. `seed` is the run's seed.
Expected<Tensor> IncomingGradient(const std::string& gradient_name, const Tensor& forward, uint64_t seed,
                                  const OutputGradients& options);

}  // namespace memopt
