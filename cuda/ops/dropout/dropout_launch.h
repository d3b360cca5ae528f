// Launch functions of ops/dropout/dropout.cu (no graph headers; see launch.h).
#pragma once

#include "launch.h"

namespace memopt::cuda {

/// The mask a Dropout-family forward writes: none, bool (1 = keep), the data type (1.0 = keep, ONNX
/// Dropout opset < 10) or packed uint32 (bit i % 32 of word i / 32, 1 = keep, padding bits 0).
enum class DropoutMask { kNone, kBool, kData, kBitmask };

/// y = (x [+ bias[i % nbias]]) * (keep ? scale : 0) [+ residual], over n elements; keep from the
/// Philox stream of exec/philox.h under `seed` when `random`, else every element is kept and the
/// scale is not applied. bias and residual are nullptr when absent. The kBitmask mask is written
/// only when `random` (the caller fills the inference mask itself).
struct DropoutParams {
  const void* x = nullptr;
  const void* bias = nullptr;
  int64_t nbias = 1;
  const void* residual = nullptr;
  void* y = nullptr;
  void* mask = nullptr;
  int64_t n = 0;
  bool random = false;
  uint64_t seed = 0;
  float keep_probability = 1.0f;  ///< DropoutKeepProbability(ratio)
  float scale = 1.0f;             ///< 1 / (1 - ratio) rounded to float, 0 when ratio is 1
};

/// Types: kF32, kF16, kBF16 (x, bias, residual, y and a kData mask all of that type).
cudaError_t LaunchDropout(ElemType t, DropoutMask mask, const DropoutParams& p, cudaStream_t stream);

/// dx[i] = keep(i) ? dy[i] * scale : 0, keep from a bool mask (n bytes) or a packed uint32 mask.
/// Types: kF32, kF16, kBF16.
cudaError_t LaunchDropoutGrad(ElemType t, bool bitmask, const void* dy, const void* mask, float scale, void* dx,
                              int64_t n, cudaStream_t stream);

}  // namespace memopt::cuda
