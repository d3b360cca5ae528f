// Gradient rules of RNN, GRU and LSTM: one ai.memopt <op>Grad node (recurrent_grad_cpu.cc) that
// reads the forward's inputs and the gradients of its outputs and recomputes the forward itself,
// so the backward keeps nothing of the forward alive but its inputs.
#include "grad/grad_context.h"
#include "ir/op_registry.h"

namespace memopt::grad {
namespace {

Status RecurrentGrad(NodeGrad& g) {
  const bool lstm = g.node().op_type == "LSTM";
  const int forward_inputs = lstm ? 8 : 6;
  std::vector<std::string> inputs;
  for (int i = 0; i < forward_inputs; ++i) inputs.push_back(g.I(i));
  for (int j = 0; j < (lstm ? 3 : 2); ++j) inputs.push_back(g.GO(j));
  while (inputs.back().empty()) inputs.pop_back();
  std::vector<std::string> outputs;
  for (int i : lstm ? std::vector<int>{0, 1, 2, 3, 5, 6, 7} : std::vector<int>{0, 1, 2, 3, 5}) {
    outputs.push_back(g.NeedGI(i) ? g.GI(i) : std::string());
  }
  while (!outputs.empty() && outputs.back().empty()) outputs.pop_back();
  g.Emit(g.node().op_type + "Grad", inputs, outputs, g.CopyAttrs(), std::string(kMemoptDomain));
  return Status::Ok();
}

}  // namespace
}  // namespace memopt::grad

MEMOPT_OPS(recurrent, recurrent_gradients) {
  using namespace memopt::grad;
  for (const char* op : {"RNN", "GRU", "LSTM"}) ops.SetGrad("", op, {RecurrentGrad, {4}});
}
