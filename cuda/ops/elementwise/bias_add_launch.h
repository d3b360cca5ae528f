// Launch function of ops/elementwise/bias_add.cu (no graph headers; see launch.h).
#pragma once

#include "launch.h"

namespace memopt::cuda {

/// y[r, c] = x[r, c] + bias[c] + skip[r, c] over `rows` rows of `channels` elements, added in float
/// in that order and rounded once on store (the CPU kernel's arithmetic). Types: kF32, kF16, kBF16.
cudaError_t LaunchBiasAdd(ElemType t, const void* x, const void* bias, const void* skip, void* y, int64_t rows,
                          int64_t channels, cudaStream_t stream);

}  // namespace memopt::cuda
