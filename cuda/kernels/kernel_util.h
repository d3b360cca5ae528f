// Host-side helpers of the CUDA kernel wrappers (kernels/*.cc): launch-error and input checks
// with the node's name, and axis normalisation, shared so every wrapper reports alike.
#pragma once

#include <cstdint>
#include <string>

#include "cuda_kernel.h"

namespace memopt::cuda {

/// Ok when the launch enqueued; else an error naming the node and the CUDA error.
Status Launched(const CudaKernelContext& ctx, cudaError_t err);

/// Input `i` present and float32/float16/bfloat16 (`name` is the schema's name for messages).
Status RequireFloat(const CudaKernelContext& ctx, int i, const char* name);

/// Input `i` present (any type).
Status RequireInput(const CudaKernelContext& ctx, int i, const char* name);

/// `axis` in [-rank, rank) mapped to [0, rank); an error naming the node otherwise.
Expected<int64_t> NormalizeAxis(const CudaKernelContext& ctx, int64_t axis, int64_t rank);

}  // namespace memopt::cuda
