// Host-side helpers of the CUDA kernel wrappers (kernels/*.cc): launch-error and input checks
// with the node's name, and axis normalisation, shared so every wrapper reports alike.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cuda_kernel.h"

namespace memopt::cuda {

/// Ok when the launch enqueued; else an error naming the node and the CUDA error.
Status Launched(const CudaKernelContext& ctx, cudaError_t err);

/// Input `i` present and float32/float16/bfloat16 (`name` is the schema's name for messages).
Status RequireFloat(const CudaKernelContext& ctx, int i, const char* name);

/// Input `i` present (any type).
Status RequireInput(const CudaKernelContext& ctx, int i, const char* name);

/// The node's inputs as Tensor::Meta views (type and shape, nullptr where omitted), the form the
/// shared op decodes (lib/ops/<family>/*.h) read.
class InputMetas {
 public:
  explicit InputMetas(const CudaKernelContext& ctx);
  InputMetas(const InputMetas&) = delete;
  InputMetas& operator=(const InputMetas&) = delete;
  const std::vector<const Tensor*>& list() const { return list_; }

 private:
  std::vector<Tensor> metas_;
  std::vector<const Tensor*> list_;
};

/// `axis` in [-rank, rank) mapped to [0, rank); an error naming the node otherwise.
Expected<int64_t> NormalizeAxis(const CudaKernelContext& ctx, int64_t axis, int64_t rank);

}  // namespace memopt::cuda
