// Shape rules of the recurrent ops RNN, GRU and LSTM, and of their gradients (ai.memopt RNNGrad,
// GRUGrad, LSTMGrad: each output has the shape of the forward input it is the gradient of).
#include <optional>

#include "ir/op_registry.h"
#include "shape/rule_registry.h"

namespace memopt::shape {
namespace {

/// RNN / GRU / LSTM: Y [seq, dirs, batch, hidden] and Y_h, Y_c [dirs, batch, hidden]
/// (layout=1: batch first).
Status RecurrentRule(InferContext& ctx) {
  const Shape* x = ctx.InputShape(0);
  const DataType dtype = ctx.InputType(0);
  const bool batch_first = ctx.node().GetInt("layout", 0) != 0;
  const SymExpr dirs(ctx.node().GetString("direction", "forward") == "bidirectional" ? 2 : 1);
  std::optional<SymExpr> hidden;
  if (ctx.node().HasAttr("hidden_size")) {
    hidden = SymExpr(ctx.node().GetInt("hidden_size", 0));
  } else if (const Shape* r = ctx.InputShape(2); r != nullptr && r->size() == 3) {
    hidden = (*r)[2];
  }
  if (x == nullptr || x->size() != 3 || !hidden.has_value()) {
    for (size_t o = 0; o < ctx.NumOutputs(); ++o) ctx.SetOutput(o, dtype, std::nullopt);
    return Status::Ok();
  }
  const SymExpr seq = (*x)[batch_first ? 1 : 0];
  const SymExpr batch = (*x)[batch_first ? 0 : 1];
  ctx.SetOutput(0, dtype, batch_first ? Shape{batch, seq, dirs, *hidden} : Shape{seq, dirs, batch, *hidden});
  for (size_t o = 1; o < ctx.NumOutputs(); ++o) {
    ctx.SetOutput(o, dtype, batch_first ? Shape{batch, dirs, *hidden} : Shape{dirs, batch, *hidden});
  }
  return Status::Ok();
}

/// dX, dW, dR, dB, d_initial_h (, d_initial_c, dP): inputs 0, 1, 2, 3, 5 (, 6, 7).
Status RecurrentGradRule(InferContext& ctx) {
  const size_t from[] = {0, 1, 2, 3, 5, 6, 7};
  for (size_t o = 0; o < ctx.NumOutputs() && o < 7; ++o) ctx.CopyInputToOutput(from[o], o);
  return Status::Ok();
}

}  // namespace
}  // namespace memopt::shape

MEMOPT_OPS(recurrent, recurrent_shape) {
  using namespace memopt::shape;
  RuleRegistry r(ops);
  for (const char* op : {"RNN", "GRU", "LSTM"}) r.Add("", op, RecurrentRule);
  for (const char* op : {"RNNGrad", "GRUGrad", "LSTMGrad"}) r.Add(std::string(memopt::kMemoptDomain), op, RecurrentGradRule);
}
