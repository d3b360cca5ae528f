// BiasAdd's decode (com.microsoft BiasAdd, ONNX Runtime's contrib op for diffusion models'
// residual blocks): Y = X + bias + skip, with X and skip of shape (N, S, C) and bias of shape (C).
// One set of checks and messages for every backend (the CPU kernel in bias_add_cpu.cc, the CUDA
// wrapper in cuda/ops/elementwise/bias_add.cc); only shapes and types are read, so a backend
// passes Tensor::Meta views of its device tensors.
#pragma once

#include <cstdint>

#include "exec/tensor.h"
#include "util/status.h"

namespace memopt::bias_add {

/// `rows` = N * S rows of `channels` = C elements; bias[c] is added to column c of every row.
struct BiasAddPlan {
  int64_t rows = 0;
  int64_t channels = 0;
};

/// Checks that X and skip are (N, S, C) of one float type and bias is (C) of that type. Errors
/// (InvalidInput) carry no node name: a kernel passes the message to its context's Error.
Expected<BiasAddPlan> DecodeBiasAdd(const Tensor& x, const Tensor& bias, const Tensor& skip);

}  // namespace memopt::bias_add
