// The kernel interface of the CUDA executor, the GPU twin of exec/kernel.h: a kernel reads
// device tensors, allocates its outputs from the run's pool and enqueues work on the pool's
// stream. Kernels are registered explicitly by (domain, op), like the CPU ones.
#pragma once

#include "exec/output_gradients.h"

#include <cublas_v2.h>

#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "device_pool.h"
#include "device_tensor.h"
#include "ir/graph.h"
#include "ir/op_key.h"
#include "util/status.h"

namespace memopt::cuda {

struct CudaKernelContext {
  const Node* node = nullptr;
  std::vector<const DeviceTensor*> inputs;  ///< nullptr for an omitted optional input
  std::vector<DeviceTensor> outputs;        ///< the kernel assigns the outputs it produces
  std::shared_ptr<DevicePool> pool;
  cublasHandle_t cublas = nullptr;  ///< bound to the pool's stream
  bool allow_tf32 = false;          ///< float32 MatMul/Gemm may use TF32 tensor cores
  /// Seed of this run, as KernelContext::run_seed (Dropout-family ops without a `seed` attribute).
  uint64_t run_seed = 0;
  /// Incoming gradients for the YieldOp (nullptr: the defaults of OutputGradients).
  const OutputGradients* output_grads = nullptr;
  /// The graph being run (may be nullptr in unit tests): names of values.
  const Graph* graph = nullptr;

  cudaStream_t stream() const { return pool->stream(); }
  int num_inputs() const { return static_cast<int>(inputs.size()); }
  bool has_input(int i) const { return i < num_inputs() && inputs[i] != nullptr; }
  const DeviceTensor& input(int i) const { return *inputs[i]; }
  /// Whether the node uses output `i` (false past its outputs or for an omitted one), as
  /// KernelContext::output_wanted.
  bool output_wanted(int i) const {
    return i >= 0 && i < static_cast<int>(node->outputs.size()) && node->outputs[i] != kNone;
  }
  /// Allocates output `i` (uninitialised).
  Status AllocateOutput(int i, DataType dtype, std::vector<int64_t> shape);
  /// Error naming the node: "node 'x' (Op): <message>".
  Status Error(const std::string& message) const;
  /// Unsupported naming the node and the type: "node 'x' (Op): float64 is not supported on the GPU".
  Status UnsupportedType(DataType dtype) const;
};

/// A cuBLAS handle bound to `stream` (destroyed with the last reference).
using CublasPtr = std::shared_ptr<std::remove_pointer_t<cublasHandle_t>>;
Expected<CublasPtr> CreateCublas(cudaStream_t stream);

using CudaKernelFn = Status (*)(CudaKernelContext& ctx);

class CudaKernelRegistry {
 public:
  /// The registry with every built-in CUDA kernel (kernels/register.cc).
  static const CudaKernelRegistry& Builtin();

  /// domain "" = ai.onnx; "com.microsoft" for contrib/training ops.
  void Register(const std::string& domain, const std::string& op, CudaKernelFn fn) {
    kernels_[{std::string(NormalizeDomain(domain)), op}] = fn;
  }
  /// The kernel of `domain::op` (domain normalised), trying the fallback domain of ir/op_key.h on
  /// a miss, as every op lookup does.
  CudaKernelFn Find(const std::string& domain, const std::string& op) const {
    return FindWithFallback(domain, [&](std::string_view d) -> CudaKernelFn {
      auto it = kernels_.find({std::string(d), op});
      return it == kernels_.end() ? nullptr : it->second;
    });
  }
  /// "op" or "domain::op", sorted.
  std::vector<std::string> OpNames() const;

 private:
  std::map<std::pair<std::string, std::string>, CudaKernelFn> kernels_;
};

/// Every op of `graph` that cannot run: no CUDA kernel, and not host-capable (host_fallback.h:
/// integer shape arithmetic runs on the CPU). By op and first node, in the CPU executor's format:
/// "unsupported ops on the GPU: Foo (node 'n1'), com.microsoft::Bar (node 'Bar#7')".
Status CheckSupported(const Graph& graph, const CudaKernelRegistry& registry);

// Registration functions, one per kernels/ file (called by kernels/register.cc).
void RegisterElementwiseKernels(CudaKernelRegistry& r);  // kernels/elementwise.cc (binary, activations)
void RegisterCastKernels(CudaKernelRegistry& r);         // kernels/elementwise.cc (Cast)
void RegisterMatMulKernels(CudaKernelRegistry& r);       // kernels/matmul.cc (cuBLAS)
void RegisterViewKernels(CudaKernelRegistry& r);         // kernels/view.cc (Reshape, Identity, Shape, ...)
void RegisterDataMovementKernels(CudaKernelRegistry& r); // kernels/data_movement.cc
void RegisterSoftmaxKernels(CudaKernelRegistry& r);      // kernels/softmax.cc (+ cross-entropy loss)
void RegisterNormKernels(CudaKernelRegistry& r);         // ops/norm/norm.cc (+ Reduce*)
void RegisterDropoutKernels(CudaKernelRegistry& r);      // ops/dropout/dropout.cc

}  // namespace memopt::cuda
