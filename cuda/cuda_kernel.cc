#include "cuda_kernel.h"

#include "cublas_loader.h"
#include "host_fallback.h"

#include <algorithm>

namespace memopt::cuda {

Expected<CublasPtr> CreateCublas(cudaStream_t stream) {
  MEMOPT_ASSIGN_OR_RETURN(const CublasApi* api, LoadCublas());
  cublasHandle_t handle = nullptr;
  cublasStatus_t st = api->create(&handle);
  if (st == CUBLAS_STATUS_SUCCESS) st = api->set_stream(handle, stream);
  // Split-K partial sums are reduced in float, as the CPU reference accumulates: by default cuBLAS
  // may reduce them in a 16-bit output type, which on an H200 put a bfloat16 [7, 1023] x [1023, 5]
  // product 0.13 (absolute, on a result near 1) off the float-accumulated value.
  if (st == CUBLAS_STATUS_SUCCESS) {
    const int mode = CUBLAS_DEFAULT_MATH | CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION;
    st = api->set_math_mode(handle, static_cast<cublasMath_t>(mode));
  }
  if (st != CUBLAS_STATUS_SUCCESS) {
    if (handle != nullptr) api->destroy(handle);
    return InternalError(std::string("cuBLAS initialisation failed: ") + api->status_name(st));
  }
  return CublasPtr(handle, [api](cublasHandle_t h) { api->destroy(h); });
}

Status CudaKernelContext::AllocateOutput(int i, DataType dtype, std::vector<int64_t> shape) {
  auto t = DeviceTensor::Empty(pool, dtype, std::move(shape));
  if (!t.ok()) return Error(t.status().message());
  outputs[i] = std::move(t).value();
  return Status::Ok();
}

Status CudaKernelContext::Error(const std::string& message) const {
  return InvalidInput("node " + node->Describe() + ": " + message);
}

Status CudaKernelContext::UnsupportedType(DataType dtype) const {
  return Unsupported("node " + node->Describe() + ": " + DataTypeName(dtype) + " is not supported on the GPU");
}

const CudaKernelRegistry& CudaKernelRegistry::Builtin() {
  static const CudaKernelRegistry registry = [] {
    CudaKernelRegistry r;
    RegisterCudaOpFiles(r);
    return r;
  }();
  return registry;
}

std::vector<std::string> CudaKernelRegistry::OpNames() const {
  std::vector<std::string> names;
  for (const auto& [key, fn] : kernels_) names.push_back(OpKey(key.first, key.second).ToString());
  std::sort(names.begin(), names.end());
  return names;
}

Status CheckSupported(const Graph& graph, const CudaKernelRegistry& registry) {
  std::map<std::string, std::string> missing;  // op key -> first node
  for (const Node& node : graph.nodes) {
    if (registry.Find(node.domain, node.op_type) != nullptr || HostCapable(graph, node)) continue;
    const std::string shown = node.name.empty() ? node.op_type + "#" + std::to_string(node.id) : node.name;
    missing.emplace(OpKey::Of(node).ToString(), shown);
  }
  if (missing.empty()) return Status::Ok();
  std::string list;
  for (const auto& [op, node] : missing) list += (list.empty() ? "" : ", ") + op + " (node '" + node + "')";
  return Unsupported("unsupported ops on the GPU: " + list);
}

}  // namespace memopt::cuda
