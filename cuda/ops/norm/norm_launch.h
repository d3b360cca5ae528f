// Launch functions of ops/norm/norm.cu and norm_grad.cu (no graph headers; see launch.h): the
// layer normalisations over the 2-D view [rows, cols] at `axis`, and their gradients.
#pragma once

#include <cstdint>

#include "launch.h"
#include "ops/reduce/reduce_launch.h"

namespace memopt::cuda {

/// One launch of LayerNormalization / SimplifiedLayerNormalization / RMSNormalization and the
/// Skip variants. The row to normalise is s = x + skip + pre_bias (skip and pre_bias optional:
/// nullptr). Per row: mean (0 when `simplified`), inv_std = 1 / sqrt(mean((s - mean)^2) + eps),
/// y = (s - mean) * inv_std * scale + bias. Optional (nullptr) outputs: sum_out = s, mean and
/// inv_std (one value per row, double when stats_double, else float).
struct LayerNormArgs {
  const void* x = nullptr;         ///< element type T
  const void* skip = nullptr;      ///< T, skip_rows rows of cols (row r reads skip row r % skip_rows)
  int64_t skip_rows = 1;
  const void* pre_bias = nullptr;  ///< T, cols
  const void* scale = nullptr;     ///< P, cols
  const void* bias = nullptr;      ///< P, cols
  void* y = nullptr;               ///< P
  void* sum_out = nullptr;         ///< T
  void* mean = nullptr;
  void* inv_std = nullptr;
  bool stats_double = false;
  bool simplified = false;
  float epsilon = 1e-5f;
  int64_t rows = 0, cols = 0;
};

/// Types: x_type (T) and param_type (P) equal, or one of them kF32, from kF32/kF16/kBF16.
cudaError_t LaunchLayerNorm(ElemType x_type, ElemType param_type, const LayerNormArgs& a, cudaStream_t stream);

enum class LayerNormGradKind { kFull, kSimplified, kInvertible };

/// LayerNormalizationGrad (kFull: dy, x, scale, mean, inv_std), SimplifiedLayerNormalizationGrad
/// (kSimplified: dy, x, scale, inv_std) and InvertibleLayerNormalizationGrad (kInvertible: dy,
/// x = the forward's Y, scale, bias, inv_std). With xhat the normalised input and
/// b = dy * scale * inv_std: dx = b - mean_row(b) - xhat * mean_row(b * xhat) (no mean_row(b)
/// when simplified); dscale = sum over rows of dy * xhat; dbias = sum over rows of dy. dscale and
/// dbias are optional (nullptr).
struct LayerNormGradArgs {
  LayerNormGradKind kind = LayerNormGradKind::kFull;
  const void* dy = nullptr;       ///< T
  const void* x = nullptr;        ///< T
  const void* scale = nullptr;    ///< P, cols
  const void* bias = nullptr;     ///< P, cols (kInvertible)
  const void* mean = nullptr;     ///< one per row (kFull), double when stats_double, else float
  const void* inv_std = nullptr;  ///< one per row, same type as mean
  bool stats_double = false;
  void* dx = nullptr;             ///< T
  void* dscale = nullptr;         ///< P
  void* dbias = nullptr;          ///< P
  int64_t rows = 0, cols = 0;
};

/// Float scratch elements LaunchLayerNormGrad needs for the dScale/dBias partial sums.
inline int64_t LayerNormGradScratch(int64_t rows, int64_t cols) {
  return 2 * PlanColumnReduce(1, rows, cols).partials();
}

/// Types as LaunchLayerNorm (x/dy/dx: x_type; scale/bias/dscale/dbias: param_type).
/// `scratch`: LayerNormGradScratch(rows, cols) floats.
cudaError_t LaunchLayerNormGrad(ElemType x_type, ElemType param_type, const LayerNormGradArgs& a, float* scratch,
                                cudaStream_t stream);

}  // namespace memopt::cuda
