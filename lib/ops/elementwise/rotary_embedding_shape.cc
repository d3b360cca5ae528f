// Shape rule of RotaryEmbedding (ONNX and com.microsoft): the output is the input's shape.
#include "ir/op_registry.h"
#include "shape/rule_registry.h"

namespace memopt::shape {
namespace {

Status SameAsInput(InferContext& ctx) {
  ctx.CopyInputToOutput(0, 0);
  return Status::Ok();
}

}  // namespace
}  // namespace memopt::shape

MEMOPT_OPS(elementwise, rotary_embedding_shape) {
  using namespace memopt::shape;
  RuleRegistry r(ops);
  r.Add("", "RotaryEmbedding", SameAsInput);
  r.Add(kMsDomain, "RotaryEmbedding", SameAsInput);
}
