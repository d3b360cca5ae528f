// Plain launch functions of the CUDA kernels (.cu files), free of graph and protobuf headers so
// that nvcc compiles only the device code. The .cc wrappers check nodes, shapes and types, then
// call these; each returns the launch error (cudaSuccess when the kernel was enqueued).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace memopt::cuda {

/// Element types the kernels handle (a subset of each op's list; see the wrappers).
enum class ElemType { kF32, kF16, kBF16, kF64, kI32, kI64, kBool };

/// Broadcasting of two inputs to the output shape: per output dim, each input's stride in
/// elements (0 where the input is broadcast). Dims of size 1 are dropped before filling it.
constexpr int kMaxRank = 8;
struct BroadcastShape {
  int rank = 0;
  int64_t out_dims[kMaxRank] = {};
  int64_t a_strides[kMaxRank] = {};
  int64_t b_strides[kMaxRank] = {};
};

enum class BinaryOp { kAdd, kSub, kMul, kDiv, kCopyA };

/// y = op(a, b) over `n` output elements. `bc` nullptr: a, b and y have n elements each.
/// kCopyA broadcasts a into y (b is ignored). Types: kF32, kF16, kBF16.
cudaError_t LaunchBinary(BinaryOp op, ElemType t, const void* a, const void* b, void* y, int64_t n,
                         const BroadcastShape* bc, cudaStream_t stream);

enum class Activation { kRelu, kGelu, kGeluTanh, kFastGelu };
/// y[i] = f(x[i] + bias[i % nbias]) (no bias when `bias` is nullptr). Types: kF32, kF16, kBF16.
cudaError_t LaunchActivation(Activation f, ElemType t, const void* x, const void* bias, int64_t nbias, void* y,
                             int64_t n, cudaStream_t stream);

enum class ActivationGrad { kGeluGrad, kFastGeluGrad, kReluGrad };
/// dx[i] = f(dy[i], x[i] + bias[i % nbias]). Types: kF32, kF16, kBF16.
cudaError_t LaunchActivationGrad(ActivationGrad f, ElemType t, const void* dy, const void* x, const void* bias,
                                 int64_t nbias, void* dx, int64_t n, cudaStream_t stream);

/// y = Cast(x) between any two ElemTypes, with the CPU Cast's rounding and truncation rules.
cudaError_t LaunchCast(ElemType from, ElemType to, const void* x, void* y, int64_t n, cudaStream_t stream);

}  // namespace memopt::cuda
