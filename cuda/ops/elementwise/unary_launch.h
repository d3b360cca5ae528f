// Launch function of ops/elementwise/unary.cu (no graph headers; see launch.h).
#pragma once

#include "launch.h"

namespace memopt::cuda {

enum class UnaryOp { kNeg, kExp };

/// y[i] = op(x[i]) over n elements, in float for float16/bfloat16 (rounded once on store).
/// Types: kF32, kF16, kBF16.
cudaError_t LaunchUnary(UnaryOp op, ElemType t, const void* x, void* y, int64_t n, cudaStream_t stream);

}  // namespace memopt::cuda
