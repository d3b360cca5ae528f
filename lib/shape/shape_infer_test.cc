#include "shape/shape_infer.h"

#include "helpers/shape_test_util.h"

namespace memopt {
namespace {

using testing::HasDiagnosticContaining;
using testing::InferText;
using testing::TypeAndShape;

TEST_CASE("InferShapes: elementwise chain with symbolic dims", "[shape]") {
  auto r = InferText(R"(
    <ir_version: 8, opset_import: ["" : 17, "com.microsoft" : 1]>
    g (float[N, 128] X, float[128, 64] W) => (float[N, 64] Y) {
      T = MatMul(X, W)
      G = com.microsoft.Gelu(T)
      Y = Relu(G)
    }
  )");
  CHECK(TypeAndShape(r.model.graph, "T") == "float[N, 64]");
  CHECK(TypeAndShape(r.model.graph, "G") == "float[N, 64]");
  CHECK(TypeAndShape(r.model.graph, "Y") == "float[N, 64]");
  CHECK(r.stats.nodes_visited == 3);
  CHECK(r.stats.ops_without_rule.empty());
  CHECK(r.stats.diagnostics.empty());
  CHECK(r.stats.values_without_shape == 0);
}

TEST_CASE("InferShapes: nodes out of proto order are visited topologically", "[shape]") {
  auto r = InferText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[B, 3] X) => (float[B, 3] Y) {
      Y = Neg(T)
      T = Abs(X)
    }
  )");
  CHECK(TypeAndShape(r.model.graph, "Y") == "float[B, 3]");
  CHECK(r.stats.nodes_visited == 2);
}

TEST_CASE("InferShapes: a cycle is an error naming a node", "[shape]") {
  auto model = LoadModelFromText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[B] X) => (float[B] Y) {
      A = Add(X, Y)
      Y = Relu(A)
    }
  )");
  // The loader reads nodes as they come; the cycle is found by ordering them.
  INFO(model.status().message());
  REQUIRE(model.ok());
  auto stats = InferShapes(model->graph);
  REQUIRE_FALSE(stats.ok());
  CHECK(stats.status().message().find("cycle") != std::string::npos);
  CHECK(stats.status().message().find("(Add)") != std::string::npos);
}

TEST_CASE("InferShapes: MatMul with different constant inner dims fails naming the node", "[shape]") {
  auto model = LoadModelFromText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[B, 3] X, float[4, 5] W) => (float[B, 5] Y) {
      Y = MatMul(X, W)
    }
  )");
  REQUIRE(model.ok());
  model->graph.nodes[0].name = "mm";
  auto stats = InferShapes(model->graph);
  REQUIRE_FALSE(stats.ok());
  CHECK(stats.status().message().find("'mm' (MatMul)") != std::string::npos);
  CHECK(stats.status().message().find("inner dims differ") != std::string::npos);
}

TEST_CASE("InferShapes: fresh dims are replaced by declared value_info dims", "[shape]") {
  // Reshape's shape input is a graph input (values unknown): inference only knows the rank.
  auto r = InferText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[B, 12] X, int64[3] S) => (float[B, 3, 4] Y) {
      Y = Reshape(X, S)
    }
  )");
  CHECK(TypeAndShape(r.model.graph, "Y") == "float[B, 3, 4]");
  CHECK(r.stats.diagnostics.empty());

  ShapeInferenceOptions no_declared;
  no_declared.use_declared_shapes = false;
  auto raw = InferText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[B, 12] X, int64[3] S) => (float[B, 3, 4] Y) {
      Y = Reshape(X, S)
    }
  )", no_declared);
  CHECK(TypeAndShape(raw.model.graph, "Y") == "float[unk__0, unk__1, unk__2]");
  REQUIRE(raw.stats.diagnostics.size() == 3);
  CHECK(raw.stats.diagnostics[1].message == "dim 1 of 'Y' unresolved: Reshape shape input not constant (now unk__1)");
  CHECK(raw.stats.diagnostics[1].tensor == "Y");
  CHECK(raw.stats.diagnostics[1].node == 0);
}

TEST_CASE("InferShapes: fresh dim numbering continues after the loader's unk__ dims", "[shape]") {
  ShapeInferenceOptions no_declared;
  no_declared.use_declared_shapes = false;
  auto r = InferText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[?, 12] X, int64[2] S) => (float[?, ?] Y) {
      Y = Reshape(X, S)
    }
  )", no_declared);
  // The loader named X's unknown dim and Y's declared dims unk__0..unk__2.
  CHECK(TypeAndShape(r.model.graph, "Y") == "float[unk__3, unk__4]");
}

TEST_CASE("InferShapes: inferred shapes win over declared ones, declared fills unknown ranks", "[shape]") {
  auto r = InferText(R"(
    <ir_version: 8, opset_import: ["" : 17, "x.custom" : 1]>
    g (float[B, 8] X) => (float[B, 8] Y, float[P, Q] Z) <float[B, 7] T> {
      T = Relu(X)
      Y = Identity(T)
      Z = x.custom.Mystery(X)
    }
  )");
  CHECK(TypeAndShape(r.model.graph, "T") == "float[B, 8]");
  CHECK(TypeAndShape(r.model.graph, "Z") == "float[P, Q]");
  // Declared info covers the unknown op's output: no diagnostic, no ops_without_rule entry.
  CHECK(r.stats.ops_without_rule.empty());
}

TEST_CASE("InferShapes: ops without rule and without declared info are reported", "[shape]") {
  auto r = InferText(R"(
    <ir_version: 8, opset_import: ["" : 17, "x.custom" : 1]>
    g (float[B, 8] X) => (float[B, 8] Y) {
      Z = x.custom.Mystery(X)
      W = x.custom.Mystery(Z)
      Y = Relu(X)
    }
  )");
  REQUIRE(r.stats.ops_without_rule.size() == 1);
  CHECK(r.stats.ops_without_rule[0] == "x.custom::Mystery");
  CHECK(HasDiagnosticContaining(r.stats, "no shape rule for op 'Mystery' (domain 'x.custom')"));
  CHECK(TypeAndShape(r.model.graph, "W") == "undefined[?]");
  CHECK(r.stats.values_without_shape == 2);
}

TEST_CASE("InferShapes: dtype conflicts are diagnosed and the inferred dtype wins", "[shape]") {
  auto r = InferText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[B] X) => (double[B] Y) {
      Y = Relu(X)
    }
  )");
  CHECK(TypeAndShape(r.model.graph, "Y") == "float[B]");
  CHECK(HasDiagnosticContaining(r.stats, "dtype conflict: inferred float, declared double"));
}

TEST_CASE("InferShapes: ambiguous broadcasts resolve to a declared operand", "[shape]") {
  const char* text = R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[A, 4] X, float[B, 4] Z) => (float[B, 4] Y) {
      Y = Add(X, Z)
    }
  )";
  auto r = InferText(text);
  CHECK(TypeAndShape(r.model.graph, "Y") == "float[B, 4]");
  ShapeInferenceOptions no_declared;
  no_declared.use_declared_shapes = false;
  auto raw = InferText(text, no_declared);
  CHECK(TypeAndShape(raw.model.graph, "Y") == "float[" + SymExpr::Max(SymExpr::Symbol("A"), SymExpr::Symbol("B")).ToString() + ", 4]");
}

}  // namespace
}  // namespace memopt

namespace memopt {
namespace {

TEST_CASE("InferShapes: a matmul inner dim binds a symbol to a constant for later nodes", "[shape]") {
  auto r = testing::InferText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[N, D] X, float[500, 784] W, float[N, 500] dY) => (float[500, D] dW) {
      Y = Gemm <transB = 1> (X, W)
      dW = Gemm <transA = 1> (dY, X)
      s = Shape(X)
    }
  )");
  CHECK(testing::TypeAndShape(r.model.graph, "Y") == "float[N, 500]");
  CHECK(testing::TypeAndShape(r.model.graph, "dW") == "float[500, 784]");
  CHECK(testing::ValuesOf(r.model.graph, "s") == "[N, 784]");
  // The graph input itself keeps its declared dims.
  CHECK(testing::TypeAndShape(r.model.graph, "X") == "float[N, D]");
}

}  // namespace
}  // namespace memopt
