#include "host_fallback.h"

#include "exec/kernel.h"

namespace memopt::cuda {

namespace {
bool IsIntegerOrBool(DataType t) {
  switch (t) {
    case DataType::kInt64:
    case DataType::kInt32:
    case DataType::kInt16:
    case DataType::kInt8:
    case DataType::kUint64:
    case DataType::kUint32:
    case DataType::kUint16:
    case DataType::kUint8:
    case DataType::kBool: return true;
    default: return false;
  }
}
}  // namespace

bool HostCapable(const Graph& graph, const Node& node) {
  if (KernelRegistry::Cpu().Find(node.domain, node.op_type) == nullptr) return false;
  for (ValueId v : node.inputs) {
    if (v != kNone && !IsIntegerOrBool(graph.value(v).info.dtype)) return false;
  }
  return true;
}

bool RunsOnHost(const CudaKernelContext& ctx, const CudaKernelRegistry& registry) {
  if (KernelRegistry::Cpu().Find(ctx.node->domain, ctx.node->op_type) == nullptr) return false;
  if (registry.Find(ctx.node->domain, ctx.node->op_type) == nullptr) return true;
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    if (ctx.has_input(i) && ctx.input(i).host_mirror() == nullptr) return false;
  }
  return true;
}

Expected<std::vector<Tensor>> RunCpuKernel(const CudaKernelContext& ctx, const Graph* graph, int metadata_only) {
  const KernelInfo* info = KernelRegistry::Cpu().Find(ctx.node->domain, ctx.node->op_type);
  if (info == nullptr) return Unsupported("node " + ctx.node->Describe() + ": no CUDA or CPU kernel");
  std::vector<Tensor> host(static_cast<size_t>(ctx.num_inputs()));
  KernelContext cpu;
  cpu.node = ctx.node;
  cpu.run_seed = ctx.run_seed;
  cpu.graph = graph;
  cpu.inputs.assign(host.size(), nullptr);
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    if (!ctx.has_input(i)) continue;
    const DeviceTensor& d = ctx.input(i);
    if (i == metadata_only) {
      host[i] = d.Meta();
    } else if (d.host_mirror() != nullptr) {
      host[i] = *d.host_mirror();
    } else {
      MEMOPT_ASSIGN_OR_RETURN(host[i], d.Download());
    }
    cpu.inputs[i] = &host[i];
  }
  cpu.outputs.resize(ctx.node->outputs.size());
  MEMOPT_RETURN_IF_ERROR(info->fn(cpu));
  return std::move(cpu.outputs);
}

Status RunOnHost(CudaKernelContext& ctx, const Graph* graph) {
  MEMOPT_ASSIGN_OR_RETURN(std::vector<Tensor> outputs, RunCpuKernel(ctx, graph));
  for (size_t j = 0; j < outputs.size(); ++j) {
    if (!outputs[j].defined()) continue;
    auto uploaded = DeviceTensor::Upload(ctx.pool, outputs[j]);
    if (!uploaded.ok()) return ctx.Error(uploaded.status().message());
    ctx.outputs[j] = std::move(uploaded).value();
  }
  return Status::Ok();
}

}  // namespace memopt::cuda
