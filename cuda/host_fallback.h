// Nodes the CUDA executor runs with the CPU reference kernel: shape arithmetic on small integer
// tensors (Shape -> Gather -> Concat -> Reshape chains, constants), whose values the host holds
// anyway (DeviceTensor's mirror), as ONNX Runtime places such nodes on its CPU provider. Their
// results are uploaded, so memory accounting is unchanged, and the mirrors keep the chain on the
// host without device round trips.
#pragma once

#include "cuda_kernel.h"

namespace memopt::cuda {

/// Statically: a node without a CUDA kernel may still run (on the host) when the CPU has a
/// kernel for it and every input is an integer or bool tensor (or it has no inputs).
bool HostCapable(const Graph& graph, const Node& node);

/// At run time: run this node on the host? True when the CPU has a kernel and either there is
/// no CUDA kernel or every present input has a host mirror (small integer tensors).
bool RunsOnHost(const CudaKernelContext& ctx, const CudaKernelRegistry& registry);

/// Runs ctx.node's CPU kernel on the host copies of its inputs (mirrors, else downloads) and
/// uploads the outputs into ctx.outputs.
Status RunOnHost(CudaKernelContext& ctx, const Graph* graph);

/// Runs ctx.node's CPU kernel on host copies of its inputs and returns its outputs on the host.
/// Input `metadata_only` (or none with -1) is passed as Tensor::Meta, type and shape without data:
/// for the view and shape kernels, which read no elements (ops/layout/view.cc).
Expected<std::vector<Tensor>> RunCpuKernel(const CudaKernelContext& ctx, const Graph* graph, int metadata_only = -1);

}  // namespace memopt::cuda
