// The batched-product plan shared by the CPU MatMul family (ops/matmul/matmul_cpu.cc) and the CUDA
// wrappers (cuda/ops/matmul/matmul.cc): each operand is described by where its logical [rows, cols]
// matrices live in memory (leading dimension, BLAS transpose flag, distance between consecutive
// batch entries), which covers transA/transB and FusedMatMul's transBatch layouts
// (ort_training_ops.md 2.10) without copying; batch dims broadcast like numpy.
#pragma once

#include <cstdint>
#include <vector>

#include "util/status.h"

namespace memopt {

/// Where the logical [rows, cols] matrices of one operand live.
struct MatMulOperand {
  std::vector<int64_t> batch;  ///< logical batch dims
  int64_t rows = 0;
  int64_t cols = 0;
  bool trans = false;        ///< stored as [cols, rows], rows of length ld
  int64_t ld = 0;            ///< row stride of the stored matrix
  int64_t batch_stride = 0;  ///< elements between consecutive flattened batch entries
  bool vector = false;       ///< rank-1 operand (numpy promotion; the added dim is dropped)

  /// Offset of logical element (r, c) within one batch entry.
  int64_t At(int64_t r, int64_t c) const { return trans ? c * ld + r : r * ld + c; }
};

/// `is_b`: rank 1 becomes [K, 1] instead of [1, K]; rank-1 operands ignore trans and transBatch.
MatMulOperand DescribeMatMulOperand(const std::vector<int64_t>& shape, bool trans, bool trans_batch, bool is_b);

struct MatMulPlan {
  MatMulOperand a, b;
  std::vector<int64_t> batch;         ///< broadcast batch dims of the output
  std::vector<int64_t> a_off, b_off;  ///< element offset of each output batch entry's operands
  std::vector<int64_t> out_shape;
  int64_t m = 0, n = 0, k = 0;
};

/// The plan of Y = op(A) op(B); an InvalidInput error (without the node, which the caller adds)
/// when a rank is 0, the inner dims differ or the batch dims do not broadcast.
Expected<MatMulPlan> PlanMatMul(const std::vector<int64_t>& a, const std::vector<int64_t>& b, bool trans_a,
                                bool trans_b, bool trans_batch_a, bool trans_batch_b);

}  // namespace memopt
