#include "shape/dim_expr.h"

#include <onnx/defs/parser.h>

#include "helpers/shape_test_util.h"

namespace memopt::shape {
namespace {

SymExpr S(const char* name) { return SymExpr::Symbol(name); }

TEST_CASE("ParseDimExpression reads sympy-printed dims", "[shape]") {
  CHECK(ParseDimExpression("batch") == std::nullopt);
  CHECK(ParseDimExpression("seq-len") == std::nullopt);
  CHECK(ParseDimExpression("16*inputs_input_ids_dim0") == SymExpr(16) * S("inputs_input_ids_dim0"));
  CHECK(ParseDimExpression("inputs_input_ids_dim0*(inputs_attention_mask_dim1 - 1)") ==
        S("inputs_input_ids_dim0") * (S("inputs_attention_mask_dim1") - SymExpr(1)));
  CHECK(ParseDimExpression("2*b + 1") == SymExpr(2) * S("b") + SymExpr(1));
  CHECK(ParseDimExpression("s**2 - s") == S("s") * S("s") - S("s"));
  CHECK(ParseDimExpression("floor(s/2) + 1") == SymExpr::FloorDiv(S("s"), SymExpr(2)) + SymExpr(1));
  CHECK(ParseDimExpression("ceiling(s/4)") == SymExpr::CeilDiv(S("s"), SymExpr(4)));
  CHECK(ParseDimExpression("Max(a, b)") == SymExpr::Max(S("a"), S("b")));
  CHECK(ParseDimExpression("4*b/2") == SymExpr(2) * S("b"));
  CHECK(ParseDimExpression("b/2") == std::nullopt);  // not exact: keep the name
  CHECK(ParseDimExpression("b*(") == std::nullopt);
  CHECK(NormalizeDeclaredDim(S("2*x")) == SymExpr(2) * S("x"));
  CHECK(NormalizeDeclaredDim(S("x")) == S("x"));
}

TEST_CASE("Declared expression dims compare with inferred ones", "[shape]") {
  onnx::ModelProto proto;
  const char* text = R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[twob, 4] X, float[b, 4] Y) => (float[twob, 4] Z) {
      Z = Add(X, Y)
    }
  )";
  REQUIRE(onnx::OnnxParser::Parse(proto, text).IsOK());
  proto.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->set_dim_param("2*b");
  proto.mutable_graph()->mutable_output(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->set_dim_param("2*b");
  auto model = ModelFromProto(proto);
  REQUIRE(model.ok());
  auto stats = InferShapes(model->graph);
  REQUIRE(stats.ok());
  CHECK(testing::TypeAndShape(model->graph, "X") == "float[2*b, 4]");
  // 2*b vs b is an ambiguous broadcast; the declared output dim resolves it.
  CHECK(testing::TypeAndShape(model->graph, "Z") == "float[2*b, 4]");
}

}  // namespace
}  // namespace memopt::shape
