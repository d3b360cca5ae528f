#include "exec/kernels/matmul_plan.h"

#include "exec/kernels/kernel_util.h"

namespace memopt {

MatMulOperand DescribeMatMulOperand(const std::vector<int64_t>& s, bool trans, bool trans_batch, bool is_b) {
  MatMulOperand op;
  const size_t r = s.size();
  if (r == 1) {
    op.vector = true;
    op.rows = is_b ? s[0] : 1;
    op.cols = is_b ? 1 : s[0];
    op.ld = op.cols;
    return op;
  }
  if (!trans_batch || r == 2) {
    op.batch.assign(s.begin(), s.end() - 2);
    op.trans = trans;
    op.rows = trans ? s[r - 1] : s[r - 2];
    op.cols = trans ? s[r - 2] : s[r - 1];
    op.ld = s[r - 1];
    op.batch_stride = op.rows * op.cols;
    return op;
  }
  // transBatch: physical [X, b0..bn, Y] where (X, Y) = (rows, cols), or (cols, rows) with trans;
  // matrix rows are bn * Y apart and consecutive batch entries Y apart.
  op.batch.assign(s.begin() + 1, s.end() - 1);
  op.trans = trans;
  op.rows = trans ? s[r - 1] : s[0];
  op.cols = trans ? s[0] : s[r - 1];
  op.ld = NumElements(op.batch) * s[r - 1];
  op.batch_stride = s[r - 1];
  return op;
}

Expected<MatMulPlan> PlanMatMul(const std::vector<int64_t>& a, const std::vector<int64_t>& b, bool trans_a,
                                bool trans_b, bool trans_batch_a, bool trans_batch_b) {
  if (a.empty() || b.empty()) return InvalidInput("MatMul operands must have rank >= 1");
  MatMulPlan p;
  p.a = DescribeMatMulOperand(a, trans_a, trans_batch_a, false);
  p.b = DescribeMatMulOperand(b, trans_b, trans_batch_b, true);
  if (p.a.cols != p.b.rows) {
    return InvalidInput("inner dimensions differ: A " + ShapeToString(a) + " gives K=" + std::to_string(p.a.cols) +
                        ", B " + ShapeToString(b) + " gives K=" + std::to_string(p.b.rows));
  }
  auto batch = BroadcastShape(p.a.batch, p.b.batch);
  if (!batch) {
    return InvalidInput("batch dims of A " + ShapeToString(a) + " and B " + ShapeToString(b) + " do not broadcast");
  }
  p.batch = *batch;
  p.m = p.a.rows;
  p.k = p.a.cols;
  p.n = p.b.cols;
  p.out_shape = p.batch;
  if (!p.a.vector) p.out_shape.push_back(p.m);
  if (!p.b.vector) p.out_shape.push_back(p.n);
  const int64_t count = NumElements(p.batch);
  p.a_off.resize(count);
  p.b_off.resize(count);
  if (count > 0) {
    ForEachIndexed(p.batch, {BroadcastStrides(p.a.batch, p.batch), BroadcastStrides(p.b.batch, p.batch)},
                   [&](int64_t i, const int64_t* off) {
                     p.a_off[i] = off[0] * p.a.batch_stride;
                     p.b_off[i] = off[1] * p.b.batch_stride;
                   });
  }
  return p;
}

}  // namespace memopt
