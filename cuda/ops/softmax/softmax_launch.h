// Launch functions of softmax.cu and sce_loss.cu (no graph headers; see launch.h).
// Every op here works on "rows": a tensor viewed as [outer, len, inner] has outer * inner rows of
// `len` elements, element (o, j, i) at (o * len + j) * inner + i. inner == 1 is the contiguous
// (fast) case; inner > 1 is a softmax over a middle axis or the class axis of [N, C, D1..Dk].
#pragma once

#include "launch.h"

namespace memopt::cuda {

struct RowShape {
  int64_t outer = 1;
  int64_t len = 1;
  int64_t inner = 1;
  int64_t rows() const { return outer * inner; }
};

enum class SoftmaxKind { kSoftmax, kLogSoftmax };

/// BiasSoftmax's bias (inner == 1 only): row r adds bias row `r / repeat` (inner broadcast) or
/// `r % bias_rows`, each `len` elements of the input's type.
struct SoftmaxBias {
  const void* data = nullptr;
  int64_t bias_rows = 1;
  int64_t repeat = 1;
  bool inner_broadcast = false;
};

/// y = softmax or log-softmax of (x [+ bias]) along each row. Types: kF32, kF16, kBF16.
cudaError_t LaunchSoftmax(SoftmaxKind kind, ElemType t, const void* x, const SoftmaxBias* bias, void* y,
                          RowShape shape, cudaStream_t stream);

/// Softmax: dx = y * (dy - sum(dy * y)); LogSoftmax: dx = dy - exp(y) * sum(dy), y being the
/// forward output. Row sums in double, as the CPU. Types: kF32, kF16, kBF16 (all three tensors).
cudaError_t LaunchSoftmaxGrad(SoftmaxKind kind, ElemType t, const void* dy, const void* y, void* dx, RowShape shape,
                              cudaStream_t stream);

enum class LossReduction { kNone, kSum, kMean };

/// Optional per-class weights (any float ElemType) and the ignored label of the cross-entropy ops.
/// A label outside [0, classes) that is not ignored gives a NaN loss / gradient (the wrappers check
/// labels on the host when they have a host mirror and report the CPU's error instead).
struct LabelWeights {
  ElemType label_type = ElemType::kI64;  ///< kI32 or kI64
  const void* labels = nullptr;          ///< n * d entries
  const void* weights = nullptr;         ///< `classes` entries, or nullptr
  ElemType weight_type = ElemType::kF32;
  bool has_ignore = false;
  int64_t ignore_index = 0;
};

/// Softmax cross entropy over the class axis of scores [n, classes, d] (shape.outer = n,
/// shape.len = classes, shape.inner = d).
struct SceLossArgs {
  ElemType scores_type = ElemType::kF32;
  const void* scores = nullptr;
  LabelWeights lw;
  RowShape shape;
  ElemType out_type = ElemType::kF32;  ///< of log_prob and loss
  void* log_prob = nullptr;            ///< [n, classes, d], or nullptr when not wanted
  void* loss = nullptr;                ///< [n * d] for kNone, else a scalar
  LossReduction reduction = LossReduction::kMean;
  float* scratch = nullptr;  ///< kSum/kMean: 2 * n * d floats (per-sample losses and weights)
};
cudaError_t LaunchSceLoss(const SceLossArgs& a, cudaStream_t stream);

/// dx[n, c, d] = dl[n, d] * (exp(log_prob) - [c == label]) (+ bias), dl = dY * w (kNone: dY per
/// sample; kSum: scalar dY), kMean: scalar dY * w / sum(w) (0 when sum(w) == 0).
struct SceLossGradArgs {
  ElemType dy_type = ElemType::kF32;  ///< any float type
  const void* dy = nullptr;
  ElemType log_prob_type = ElemType::kF32;  ///< also the type of bias
  const void* log_prob = nullptr;
  const void* bias = nullptr;  ///< log_prob's numel, or nullptr
  LabelWeights lw;
  RowShape shape;
  LossReduction reduction = LossReduction::kMean;
  double* weight_sum = nullptr;  ///< kMean: one double of scratch
  ElemType out_type = ElemType::kF32;
  void* dx = nullptr;
};
cudaError_t LaunchSceLossGrad(const SceLossGradArgs& a, cudaStream_t stream);

}  // namespace memopt::cuda
