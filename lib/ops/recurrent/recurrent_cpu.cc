// RNN, GRU and LSTM (every ONNX attribute: directions, layout, sequence_lens, initial states,
// peepholes, clip, input_forget, linear_before_reset, the activation functions with their
// alpha/beta), one direction after another through recurrent_util.h's engine, in float (double
// for double tensors); X is read and Y written a row at a time.
#include "exec/kernels/elementwise.h"
#include "ir/op_registry.h"
#include "ops/recurrent/recurrent_util.h"

namespace memopt::recurrent {
namespace {

template <typename C>
Status Run(KernelContext& ctx, const RecurrentSetup& s) {
  const DataType dtype = ctx.input(0).dtype();
  const bool lstm = s.cell == Cell::kLstm;
  Tensor y(dtype, YShape(s));
  Tensor y_h(dtype, StateShape(s)), y_c(dtype, StateShape(s));
  const RoundFn<C> round = RoundingFor<C>(dtype);
  for (int64_t d = 0; d < s.dirs; ++d) {
    const DirectionInputs<C> in = DirectionOf<C>(ctx, s, d);
    DirectionOutputs<C> out;
    out.y = ToSequenceRows<C>(y, s, d);  // rows past an entry's length stay 0
    RunDirection(s, in, d, round, out);
    StoreState(out.h_last, s, d, y_h);
    if (lstm) StoreState(out.c_last, s, d, y_c);
  }
  ctx.outputs[0] = std::move(y);
  if (ctx.output_wanted(1)) ctx.outputs[1] = std::move(y_h);
  if (lstm && ctx.output_wanted(2)) ctx.outputs[2] = std::move(y_c);
  return Status::Ok();
}

Status RecurrentKernel(KernelContext& ctx) {
  MEMOPT_ASSIGN_OR_RETURN(RecurrentSetup s, DecodeRecurrent(ctx, CellOf(ctx.node->op_type)));
  return ComputeInDouble(ctx.input(0).dtype()) ? Run<double>(ctx, s) : Run<float>(ctx, s);
}

}  // namespace
}  // namespace memopt::recurrent

MEMOPT_OPS(recurrent, recurrent_cpu) {
  for (const char* op : {"RNN", "GRU", "LSTM"}) {
    ops.SetCpuKernel("", op, memopt::recurrent::RecurrentKernel, memopt::elementwise::FloatTypes());
  }
}
