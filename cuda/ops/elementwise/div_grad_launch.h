// Launch function of ops/elementwise/div_grad.cu (no graph headers; see launch.h).
#pragma once

#include "launch.h"

namespace memopt::cuda {

/// com.microsoft DivGrad(dY, A, B) for one of its outputs: dA = sum dY / B, or dB = sum -dY * A / B^2,
/// each summed over the dims along which that input was broadcast to dY (`bc`: dY's dims and A's and
/// B's strides in them, 0 where broadcast). One output element per thread, its terms added in
/// double in dY's index order, as the CPU kernel does. Types: kF32, kF16, kBF16.
cudaError_t LaunchDivGrad(ElemType t, bool for_a, const void* dy, const void* a, const void* b, void* out,
                          int64_t out_n, const BroadcastShape& bc, cudaStream_t stream);

}  // namespace memopt::cuda
