// ai.memopt LSTMGrad / GRUGrad / RNNGrad: the gradients of a recurrent op from its own inputs and
// the gradients of its outputs. The forward is run again (recurrent_util.h: the carried hidden
// state is rounded as the forward rounded it, so the recomputed gates are the forward's), then
// back through time a segment of steps at a time (each segment's trace recomputed from the state
// at its start: the trace held is a segment's, 2 MiB at most). Nothing of the forward is kept
// for it but its inputs, where ONNX Runtime's LSTMTraining keeps every step's cell state and
// gates (5x Y).
//
// Inputs: the forward's (LSTM: X, W, R, B, sequence_lens, initial_h, initial_c, P; GRU/RNN: X, W,
// R, B, sequence_lens, initial_h), then dY, dY_h (, dY_c), each optional but X, W, R.
// Outputs: dX, dW, dR, dB, d_initial_h (, d_initial_c, dP), those wanted.
#include "exec/kernels/elementwise.h"
#include "ir/op_registry.h"
#include "ops/recurrent/recurrent_util.h"

namespace memopt::recurrent {
namespace {

Status RecurrentGradKernel(KernelContext& ctx) {
  MEMOPT_ASSIGN_OR_RETURN(RecurrentSetup s, DecodeRecurrent(ctx, CellOf(ctx.node->op_type)));
  const bool lstm = s.cell == Cell::kLstm;
  const int first_grad = lstm ? 8 : 6;
  const DataType dtype = ctx.input(0).dtype();
  const int64_t H = s.hidden, B = s.batch, T = s.seq, I = s.input, GH = s.gates * H;
  const std::vector<int64_t> state = StateShape(s);
  const std::vector<int64_t> y_shape = YShape(s);
  const char* names[] = {"dY", "dY_h", "dY_c"};
  for (int i = 0; i < (lstm ? 3 : 2); ++i) {
    if (!ctx.has_input(first_grad + i)) continue;
    const std::vector<int64_t>& want = i == 0 ? y_shape : state;
    if (ctx.input(first_grad + i).shape() != want) {
      return ctx.Error(std::string(names[i]) + " " + ctx.input(first_grad + i).Describe() + " must be " +
                       ShapeToString(want));
    }
  }
  // dX: each direction's rows go straight into the tensor; two directions sum in double first
  // (one rounding, as one direction's) and only then hold a double copy of dX.
  Tensor dxt(dtype, ctx.input(0).shape());
  std::vector<double> dx_sum(s.dirs == 2 ? static_cast<size_t>(T * B * I) : 0, 0.0);
  const WriteRow dx_rows = s.dirs == 2 ? WriteRow([&](int64_t t, int64_t b, const double* row) {
    double* dst = dx_sum.data() + (t * B + b) * I;
    for (int64_t i = 0; i < I; ++i) dst[i] += row[i];
  })
                                       : ToSequenceRows(dxt, s, -1);
  Tensor dw(dtype, {s.dirs, GH, I}), dr(dtype, {s.dirs, GH, H}), db(dtype, {s.dirs, 2 * GH});
  Tensor dh0(dtype, state), dc0(dtype, state), dp(dtype, {s.dirs, 3 * H});
  const RoundFn round = RoundingFor(dtype);
  for (int64_t d = 0; d < s.dirs; ++d) {
    const DirectionInputs in = DirectionOf(ctx, s, d);
    const ReadRow dy = ctx.has_input(first_grad) ? SequenceRows(ctx.input(first_grad), s, d) : ReadRow();
    DirectionGrads grads;
    BackwardDirection(s, in, d, round, SegmentSteps(s), dy, StateOf(ctx, s, first_grad + 1, d),
                      lstm ? StateOf(ctx, s, first_grad + 2, d) : std::vector<double>(), dx_rows, grads);
    for (int64_t i = 0; i < GH * I; ++i) dw.SetFromDouble(d * GH * I + i, grads.w[i]);
    for (int64_t i = 0; i < GH * H; ++i) dr.SetFromDouble(d * GH * H + i, grads.r[i]);
    for (int64_t j = 0; j < GH; ++j) {
      db.SetFromDouble(d * 2 * GH + j, grads.wb[j]);
      db.SetFromDouble(d * 2 * GH + GH + j, grads.rb[j]);
    }
    for (int64_t b = 0; b < B; ++b) {
      const int64_t dst = StateOffset(s, d, b);
      for (int64_t k = 0; k < H; ++k) {
        dh0.SetFromDouble(dst + k, grads.h0[b * H + k]);
        if (lstm) dc0.SetFromDouble(dst + k, grads.c0[b * H + k]);
      }
    }
    if (lstm) {
      for (int64_t k = 0; k < 3 * H; ++k) dp.SetFromDouble(d * 3 * H + k, grads.p[k]);
    }
  }
  if (s.dirs == 2) {
    const WriteRow to_dx = ToSequenceRows(dxt, s, -1);
    for (int64_t t = 0; t < T; ++t) {
      for (int64_t b = 0; b < B; ++b) to_dx(t, b, dx_sum.data() + (t * B + b) * I);
    }
  }
  Tensor* outs[] = {&dxt, &dw, &dr, &db, &dh0, &dc0, &dp};
  for (int i = 0; i < (lstm ? 7 : 5); ++i) {
    if (ctx.output_wanted(i)) ctx.outputs[i] = std::move(*outs[i]);
  }
  return Status::Ok();
}

}  // namespace
}  // namespace memopt::recurrent

MEMOPT_OPS(recurrent, recurrent_grad_cpu) {
  for (const char* op : {"RNNGrad", "GRUGrad", "LSTMGrad"}) {
    ops.SetCpuKernel(memopt::kMemoptDomain, op, memopt::recurrent::RecurrentGradKernel, memopt::elementwise::FloatTypes());
  }
}
