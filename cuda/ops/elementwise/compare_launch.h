// Launch function of ops/elementwise/compare.cu (no graph headers; see launch.h).
#pragma once

#include "launch.h"

namespace memopt::cuda {

/// y[i] = (a == b) as bool over n output elements; `bc` nullptr: a, b and y have n elements each,
/// else the broadcast of a and b to y. Floats compare by value (float16/bfloat16 widened: -0 == +0,
/// NaN equals nothing). Types: kF32, kF16, kBF16, kI32, kI64, kBool.
cudaError_t LaunchEqual(ElemType t, const void* a, const void* b, bool* y, int64_t n, const BroadcastShape* bc,
                        cudaStream_t stream);

}  // namespace memopt::cuda
