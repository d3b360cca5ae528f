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
#include "exec/kernels/float_range.h"
#include "ir/op_registry.h"
#include "ops/recurrent/recurrent_util.h"

namespace memopt::recurrent {
namespace {

template <typename C>
Status Run(KernelContext& ctx, const RecurrentSetup& s, int first_grad) {
  const bool lstm = s.cell == Cell::kLstm;
  const DataType dtype = ctx.input(0).dtype();
  const int64_t B = s.batch, T = s.seq, I = s.input, GH = s.gates * s.hidden;
  const std::vector<int64_t> state = StateShape(s);
  // dX: each direction's rows go straight into the tensor; two directions sum in C first (one
  // rounding, as one direction's) and only then hold a copy of dX.
  Tensor dxt(dtype, ctx.input(0).shape());
  std::vector<C> dx_sum(s.dirs == 2 ? static_cast<size_t>(T * B * I) : 0, C(0));
  const WriteRow<C> dx_rows = s.dirs == 2 ? WriteRow<C>([&](int64_t t, int64_t b, const C* row) {
    C* dst = dx_sum.data() + (t * B + b) * I;
    for (int64_t i = 0; i < I; ++i) dst[i] += row[i];
  })
                                          : ToSequenceRows<C>(dxt, s, -1);
  Tensor dw(dtype, {s.dirs, GH, I}), dr(dtype, {s.dirs, GH, s.hidden}), db(dtype, {s.dirs, 2 * GH});
  Tensor dh0(dtype, state), dc0(dtype, state), dp(dtype, {s.dirs, 3 * s.hidden});
  const RoundFn<C> round = RoundingFor<C>(dtype);
  for (int64_t d = 0; d < s.dirs; ++d) {
    const DirectionInputs<C> in = DirectionOf<C>(ctx, s, d);
    const ReadRow<C> dy = ctx.has_input(first_grad) ? SequenceRows<C>(ctx.input(first_grad), s, d) : ReadRow<C>();
    DirectionGrads<C> grads;
    BackwardDirection(s, in, d, round, SegmentSteps(s, sizeof(C)), dy, StateOf<C>(ctx, s, first_grad + 1, d),
                      lstm ? StateOf<C>(ctx, s, first_grad + 2, d) : std::vector<C>(), dx_rows, grads);
    StoreRange(grads.w.data(), GH * I, dw, d * GH * I);
    StoreRange(grads.r.data(), GH * s.hidden, dr, d * GH * s.hidden);
    StoreRange(grads.wb.data(), GH, db, d * 2 * GH);
    StoreRange(grads.rb.data(), GH, db, d * 2 * GH + GH);
    StoreState(grads.h0, s, d, dh0);
    if (lstm) {
      StoreState(grads.c0, s, d, dc0);
      StoreRange(grads.p.data(), 3 * s.hidden, dp, d * 3 * s.hidden);
    }
  }
  if (s.dirs == 2) {
    const WriteRow<C> to_dx = ToSequenceRows<C>(dxt, s, -1);
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

Status RecurrentGradKernel(KernelContext& ctx) {
  MEMOPT_ASSIGN_OR_RETURN(RecurrentSetup s, DecodeRecurrent(ctx, CellOf(ctx.node->op_type)));
  const bool lstm = s.cell == Cell::kLstm;
  const int first_grad = lstm ? 8 : 6;
  const std::vector<int64_t> state = StateShape(s);
  const char* names[] = {"dY", "dY_h", "dY_c"};
  for (int i = 0; i < (lstm ? 3 : 2); ++i) {
    if (!ctx.has_input(first_grad + i)) continue;
    const std::vector<int64_t>& want = i == 0 ? YShape(s) : state;
    if (ctx.input(first_grad + i).shape() != want) {
      return ctx.Error(std::string(names[i]) + " " + ctx.input(first_grad + i).Describe() + " must be " +
                       ShapeToString(want));
    }
  }
  return ComputeInDouble(ctx.input(0).dtype()) ? Run<double>(ctx, s, first_grad) : Run<float>(ctx, s, first_grad);
}

}  // namespace
}  // namespace memopt::recurrent

MEMOPT_OPS(recurrent, recurrent_grad_cpu) {
  for (const char* op : {"RNNGrad", "GRUGrad", "LSTMGrad"}) {
    ops.SetCpuKernel(memopt::kMemoptDomain, op, memopt::recurrent::RecurrentGradKernel, memopt::elementwise::FloatTypes());
  }
}
