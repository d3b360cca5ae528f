// The node loop of both executors (exec/executor.cc on the CPU, cuda/cuda_executor.cc on the
// GPU): for each step of the order, bind the node's inputs, run its kernel through the backend,
// check every wanted output was produced, store the outputs and count their bytes with the memory
// tracker, then release the values whose last consumer has run. Only the backend differs: which
// kernel runs a node, and what it measures around each node.
//
// A backend provides
//   Status Run(const Node& node, Context& ctx);          // the node's kernel
//   Status BeforeNode(int32_t step, const Node& node);   // e.g. a timer
//   Status AfterNode(int32_t step, const Node& node);    // e.g. a profile mark
// Context is KernelContext or cuda::CudaKernelContext: `node`, `inputs` (pointers into the value
// table, nullptr for omitted inputs) and `outputs` (one per node output). Value is the backend's
// tensor (Tensor, cuda::DeviceTensor): default-constructed means not computed, `bytes()` its size.
#pragma once

#include <exception>
#include <new>
#include <string>
#include <vector>

#include "analysis/exec_order.h"
#include "exec/memory_tracker.h"
#include "ir/graph.h"
#include "util/status.h"

namespace memopt {

namespace node_loop_detail {

/// Adds the node to a kernel error that does not name it yet.
inline Status WithNode(const Node& node, Status status) {
  if (status.ok() || status.message().rfind("node '", 0) == 0) return status;
  return status.WithContext("node " + node.Describe());
}

/// The node's outputs as the graph declares them, for an out-of-memory message.
std::string DescribeOutputs(const Graph& graph, const Node& node);

/// Why input value `v` of a node is not computed yet.
Status InputNotAvailable(const Graph& graph, const ExecutionOrder& order, const Node& node, ValueId v);

}  // namespace node_loop_detail

/// Runs steps [0, order.order.size()) of `order`. `values` is indexed by ValueId and holds the
/// bound graph inputs and initializers on entry, the graph outputs (and nothing released) on exit.
template <typename Value, typename Context, typename Backend>
Status RunNodeLoop(const Graph& graph, const ExecutionOrder& order, std::vector<Value>& values, Context& ctx,
                   MemoryTracker& tracker, Backend& backend) {
  const int32_t steps = static_cast<int32_t>(order.order.size());
  for (int32_t step = 0; step < steps; ++step) {
    const Node& node = graph.node(order.order[step]);
    ctx.node = &node;
    ctx.inputs.assign(node.inputs.size(), nullptr);
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const ValueId v = node.inputs[i];
      if (v == kNone) continue;
      if (!values[v].defined()) return node_loop_detail::InputNotAvailable(graph, order, node, v);
      ctx.inputs[i] = &values[v];
    }
    ctx.outputs.clear();
    ctx.outputs.resize(node.outputs.size());

    MEMOPT_RETURN_IF_ERROR(backend.BeforeNode(step, node));
    Status status;
    try {
      status = backend.Run(node, ctx);
    } catch (const std::bad_alloc&) {
      status = InvalidInput("out of memory allocating its outputs (" + node_loop_detail::DescribeOutputs(graph, node) +
                            "): more memory than this process can allocate");
    } catch (const std::exception& e) {
      status = InternalError(std::string("kernel threw: ") + e.what());
    }
    MEMOPT_RETURN_IF_ERROR(node_loop_detail::WithNode(node, std::move(status)));
    MEMOPT_RETURN_IF_ERROR(backend.AfterNode(step, node));

    for (size_t j = 0; j < node.outputs.size(); ++j) {
      const ValueId v = node.outputs[j];
      if (v == kNone) continue;
      if (!ctx.outputs[j].defined()) {
        return InternalError("node " + node.Describe() + ": kernel did not produce output " + std::to_string(j) +
                             " ('" + graph.value(v).name + "')");
      }
      values[v] = std::move(ctx.outputs[j]);
      tracker.Allocate(v, values[v].bytes());
    }
    tracker.CheckPeak(step, node.id);
    for (ValueId v : tracker.ReleasesAt(step)) {
      values[v] = Value();  // drop the reference: the buffer goes when no view shares it
      tracker.Release(v);
    }
  }
  return Status::Ok();
}

/// Hands each graph output's value to `take(name, value)` (a Status), in the graph's order; an
/// error when one was not computed.
template <typename Value, typename Take>
Status CollectGraphOutputs(const Graph& graph, const std::vector<Value>& values, Take&& take) {
  for (ValueId v : graph.outputs) {
    const std::string& name = graph.value(v).name;
    if (!values[v].defined()) {
      return InvalidInput("graph output '" + name + "' was not computed (its producer is not in the order)");
    }
    MEMOPT_RETURN_IF_ERROR(take(name, values[v]));
  }
  return Status::Ok();
}

}  // namespace memopt
