// The layer normalisations' decode: attributes and input shapes turned into the rows the kernels
// work on, with one set of checks and error messages for every backend (the CPU kernels in
// layer_norm_cpu.cc, the CUDA wrappers in cuda/ops/norm/norm.cc). Only shapes and types are read,
// so a backend passes Tensor::Meta views of its device tensors.
#pragma once

#include <cstdint>
#include <vector>

#include "exec/tensor.h"
#include "ir/graph.h"
#include "util/status.h"

namespace memopt::norm {

// Errors (InvalidInput) carry no node name: a kernel passes the message to its context's Error.

/// The 2-D view at `axis`: `rows` rows of `cols` = prod(shape[axis:]) elements.
struct NormRows {
  int64_t axis = 0;
  int64_t rows = 0;
  int64_t cols = 0;
  std::vector<int64_t> row_shape;   ///< shape[axis:]
  std::vector<int64_t> stat_shape;  ///< shape with dims axis.. set to 1 (Mean, InvStdDev)
};

/// The rows of X at the node's `axis` attribute (default -1); the gradient ops use it too.
Expected<NormRows> DecodeNormRows(const Node& node, const Tensor& x);

/// LayerNormalization, SimplifiedLayerNormalization, RMSNormalization: X, Scale, optional B.
struct LayerNormPlan {
  NormRows rows;
  double epsilon = 1e-5;
  DataType stash = DataType::kFloat;   ///< Mean/InvStdDev and statistics: double for stash_type = 11
  DataType y_type = DataType::kFloat;  ///< Scale's type (X's when Scale is not a float type)
};

/// Checks the axis and that Scale and B broadcast (right-aligned) to the normalised shape.
Expected<LayerNormPlan> DecodeLayerNorm(const Node& node, const Tensor& x, const Tensor& scale, const Tensor* bias);

/// SkipLayerNormalization (input, skip, gamma, beta?, bias?) / SkipSimplifiedLayerNormalization
/// (input, skip, gamma, bias?): input + skip (+ bias) normalised over the last axis; skip may
/// repeat over leading rows.
struct SkipNormPlan {
  int64_t hidden = 0;
  int64_t rows = 0;
  int64_t skip_rows = 0;
  double epsilon = 1e-12;
  std::vector<int64_t> stat_shape;  ///< input's shape with the last dim 1
  int beta_input = -1;              ///< input index of beta, -1 when absent
  int bias_input = -1;              ///< input index of the bias, -1 when absent
};

/// `inputs` as the kernel sees them (nullptr where omitted). Checks that skip and gamma are
/// there, skip against input, and gamma/beta/bias against the hidden size.
Expected<SkipNormPlan> DecodeSkipNorm(const Node& node, const std::vector<const Tensor*>& inputs, bool simplified);

/// The gradients: LayerNormalizationGrad(dY, X, scale, mean, inv_std_dev),
/// SimplifiedLayerNormalizationGrad(dY, X, scale, inv_std_dev) and
/// InvertibleLayerNormalizationGrad(dY, Y, scale, bias, inv_std_dev), over the rows of X (or Y) at
/// `axis`. Outputs dX, dScale?, dBias? (no dBias for the simplified form).
enum class GradKind { kFull, kSimplified, kInvertible };

struct LayerNormGradPlan {
  GradKind kind = GradKind::kFull;
  NormRows rows;
  int mean_input = -1;  ///< kFull only
  int bias_input = -1;  ///< kInvertible only
  int inv_input = 4;
};

/// `inputs` as the kernel sees them (nullptr where omitted). Checks that dY and X have as many
/// elements, X has rank >= 1 and the axis is in range, scale (and the invertible form's bias) hold
/// one value per normalised element, and mean / inv_std_dev one per row. Element types are the
/// backend's to check.
Expected<LayerNormGradPlan> DecodeLayerNormGrad(const Node& node, const std::vector<const Tensor*>& inputs);

}  // namespace memopt::norm
