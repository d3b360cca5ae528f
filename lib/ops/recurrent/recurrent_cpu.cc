// RNN, GRU and LSTM (every ONNX attribute: directions, layout, sequence_lens, initial states,
// peepholes, clip, input_forget, linear_before_reset, the activation functions with their
// alpha/beta), one direction after another through recurrent_util.h's engine, in double; X is
// read and Y written a row at a time.
#include "exec/kernels/elementwise.h"
#include "ir/op_registry.h"
#include "ops/recurrent/recurrent_util.h"

namespace memopt::recurrent {
namespace {

Status RecurrentKernel(KernelContext& ctx) {
  MEMOPT_ASSIGN_OR_RETURN(RecurrentSetup s, DecodeRecurrent(ctx, CellOf(ctx.node->op_type)));
  const DataType dtype = ctx.input(0).dtype();
  const int64_t H = s.hidden, B = s.batch;
  const bool lstm = s.cell == Cell::kLstm;
  Tensor y(dtype, YShape(s));
  Tensor y_h(dtype, StateShape(s)), y_c(dtype, StateShape(s));
  const RoundFn round = RoundingFor(dtype);
  for (int64_t d = 0; d < s.dirs; ++d) {
    const DirectionInputs in = DirectionOf(ctx, s, d);
    DirectionOutputs out;
    out.y = ToSequenceRows(y, s, d);  // rows past an entry's length stay 0
    RunDirection(s, in, d, round, out);
    for (int64_t b = 0; b < B; ++b) {
      const int64_t dst = StateOffset(s, d, b);
      for (int64_t k = 0; k < H; ++k) {
        y_h.SetFromDouble(dst + k, out.h_last[b * H + k]);
        if (lstm) y_c.SetFromDouble(dst + k, out.c_last[b * H + k]);
      }
    }
  }
  ctx.outputs[0] = std::move(y);
  if (ctx.output_wanted(1)) ctx.outputs[1] = std::move(y_h);
  if (lstm && ctx.output_wanted(2)) ctx.outputs[2] = std::move(y_c);
  return Status::Ok();
}

}  // namespace
}  // namespace memopt::recurrent

MEMOPT_OPS(recurrent, recurrent_cpu) {
  for (const char* op : {"RNN", "GRU", "LSTM"}) {
    ops.SetCpuKernel("", op, memopt::recurrent::RecurrentKernel, memopt::elementwise::FloatTypes());
  }
}
