#include "helpers/shape_test_util.h"
#include "shape/infer_context.h"

namespace memopt {
namespace {

using testing::InferText;
using testing::TypeAndShape;
using testing::ValuesOf;

TEST_CASE("Reshape: 0 copies the input dim, -1 divides the element count", "[shape]") {
  auto r = InferText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[B, S, 768] X, int64[4] s = {0, 0, 12, -1}, int64[2] t = {-1, 768}) => (float[B, S, 12, 64] Y) {
      Y = Reshape(X, s)
      Z = Reshape(X, t)
    }
  )");
  CHECK(TypeAndShape(r.model.graph, "Y") == "float[B, S, 12, 64]");
  CHECK(TypeAndShape(r.model.graph, "Z") == "float[B*S, 768]");
}

TEST_CASE("Reshape: allowzero=1 keeps a literal 0, two -1 entries are an error", "[shape]") {
  auto r = InferText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[B, 4] X, int64[2] s = {0, 4}) => (float[0, 4] Y) {
      Y = Reshape <allowzero = 1> (X, s)
    }
  )");
  CHECK(TypeAndShape(r.model.graph, "Y") == "float[0, 4]");

  auto bad = LoadModelFromText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[B, 4] X, int64[2] s = {-1, -1}) => (float[B, 4] Y) {
      Y = Reshape(X, s)
    }
  )");
  REQUIRE(bad.ok());
  auto stats = InferShapes(bad->graph);
  REQUIRE_FALSE(stats.ok());
  CHECK(stats.status().message().find("(Reshape)") != std::string::npos);
  CHECK(stats.status().message().find("more than one -1") != std::string::npos);
}

TEST_CASE("Reshape: -1 that does not divide evenly becomes a floor atom", "[shape]") {
  ShapeInferenceOptions no_declared;
  no_declared.use_declared_shapes = false;
  auto r = InferText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[B, S] X, int64[2] s = {-1, 3}) => (float[?, 3] Y) {
      Y = Reshape(X, s)
    }
  )", no_declared);
  const SymExpr bs = SymExpr::Symbol("B") * SymExpr::Symbol("S");
  CHECK(TypeAndShape(r.model.graph, "Y") == "float[" + SymExpr::FloorDiv(bs, SymExpr(3)).ToString() + ", 3]");
}

TEST_CASE("Shape -> Gather -> Unsqueeze -> Concat -> Reshape keeps symbols", "[shape]") {
  auto r = InferText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[batch, seq, 1024] X, int64 i0 = {0}, int64 i1 = {1}, int64[1] ax = {0},
       int64[2] heads = {16, 64}) => (float[batch, seq, 16, 64] Y) {
      s = Shape(X)
      b = Gather(s, i0)
      n = Gather(s, i1)
      bu = Unsqueeze(b, ax)
      nu = Unsqueeze(n, ax)
      shape = Concat <axis = 0> (bu, nu, heads)
      Y = Reshape(X, shape)
    }
  )");
  CHECK(ValuesOf(r.model.graph, "s") == "[batch, seq, 1024]");
  CHECK(TypeAndShape(r.model.graph, "b") == "int64[]");
  CHECK(ValuesOf(r.model.graph, "b") == "[batch]");
  CHECK(TypeAndShape(r.model.graph, "shape") == "int64[4]");
  CHECK(ValuesOf(r.model.graph, "shape") == "[batch, seq, 16, 64]");
  CHECK(TypeAndShape(r.model.graph, "Y") == "float[batch, seq, 16, 64]");
  CHECK(r.stats.diagnostics.empty());
}

TEST_CASE("Shape arithmetic: Mul/Div on dims then Reshape", "[shape]") {
  auto r = InferText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[b, s, 64] X, int64 i0 = {0}, int64 k = {16}, int64[1] ax = {0}, int64[2] rest = {-1, 64})
      => (float[?, ?, 64] Y) {
      sh = Shape(X)
      b = Gather(sh, i0)
      bk = Div(b, k)
      bku = Unsqueeze(bk, ax)
      shape = Concat <axis = 0> (bku, rest)
      Y = Reshape(X, shape)
    }
  )");
  const SymExpr b = SymExpr::Symbol("b");
  const SymExpr q = SymExpr::FloorDiv(b, SymExpr(16));
  CHECK(ValuesOf(r.model.graph, "bk") == "[" + q.ToString() + "]");
  const SymExpr second = shape::DivideDims(b * SymExpr::Symbol("s") * SymExpr(64), q * SymExpr(64));
  CHECK(TypeAndShape(r.model.graph, "Y") == "float[" + q.ToString() + ", " + second.ToString() + ", 64]");
}

TEST_CASE("Split: sizes from the attribute (opset 11) and from the input (opset 13)", "[shape]") {
  auto attr = InferText(R"(
    <ir_version: 7, opset_import: ["" : 11]>
    g (float[B, 10] X) => (float[B, 3] A, float[B, 7] C) {
      A, C = Split <axis = 1, split = [3, 7]> (X)
    }
  )");
  CHECK(TypeAndShape(attr.model.graph, "A") == "float[B, 3]");
  CHECK(TypeAndShape(attr.model.graph, "C") == "float[B, 7]");

  auto input = InferText(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[B, 10] X, int64[2] sp = {4, 6}) => (float[B, 4] A, float[B, 6] C) {
      A, C = Split <axis = -1> (X, sp)
    }
  )");
  CHECK(TypeAndShape(input.model.graph, "A") == "float[B, 4]");
  CHECK(TypeAndShape(input.model.graph, "C") == "float[B, 6]");

  auto even = InferText(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[S, 3, 64] X) => (float[S, 1, 64] A, float[S, 1, 64] C, float[S, 1, 64] D) {
      A, C, D = Split <axis = 1> (X)
    }
  )");
  CHECK(TypeAndShape(even.model.graph, "D") == "float[S, 1, 64]");

  auto chunks = InferText(R"(
    <ir_version: 8, opset_import: ["" : 18]>
    g (float[10] X) => (float[4] A, float[4] C, float[2] D) {
      A, C, D = Split <num_outputs = 3> (X)
    }
  )");
  CHECK(TypeAndShape(chunks.model.graph, "A") == "float[4]");
  CHECK(TypeAndShape(chunks.model.graph, "D") == "float[2]");
}

TEST_CASE("Squeeze/Unsqueeze: axes attribute (opset 11) and input (opset 13)", "[shape]") {
  auto attr = InferText(R"(
    <ir_version: 7, opset_import: ["" : 11]>
    g (float[B, 1, S] X) => (float[B, S] Y, float[1, B, 1, S] Z) {
      Y = Squeeze <axes = [1]> (X)
      Z = Unsqueeze <axes = [0]> (X)
    }
  )");
  CHECK(TypeAndShape(attr.model.graph, "Y") == "float[B, S]");
  CHECK(TypeAndShape(attr.model.graph, "Z") == "float[1, B, 1, S]");

  auto input = InferText(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[B, 1, S] X, int64[1] a = {-2}, int64[2] u = {0, -1}) => (float[B, S] Y, float[1, B, 1, S, 1] Z) {
      Y = Squeeze(X, a)
      Z = Unsqueeze(X, u)
      W = Squeeze(X)
    }
  )");
  CHECK(TypeAndShape(input.model.graph, "Y") == "float[B, S]");
  CHECK(TypeAndShape(input.model.graph, "Z") == "float[1, B, 1, S, 1]");
  CHECK(TypeAndShape(input.model.graph, "W") == "float[B, S]");
}

TEST_CASE("Concat: sums the axis dim, mismatched ranks are an error", "[shape]") {
  auto r = InferText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[B, S, 4] X, float[B, T, 4] Z) => (float[B, ?, 4] Y) {
      Y = Concat <axis = 1> (X, Z)
    }
  )");
  CHECK(TypeAndShape(r.model.graph, "Y") == "float[B, " + (SymExpr::Symbol("S") + SymExpr::Symbol("T")).ToString() + ", 4]");

  auto bad = LoadModelFromText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[B, S, 4] X, float[B, 4] Z) => (float[B, 4] Y) {
      Y = Concat <axis = 0> (X, Z)
    }
  )");
  REQUIRE(bad.ok());
  auto stats = InferShapes(bad->graph);
  REQUIRE_FALSE(stats.ok());
  CHECK(stats.status().message().find("(Concat)") != std::string::npos);
  CHECK(stats.status().message().find("different ranks") != std::string::npos);
}

TEST_CASE("Transpose, Flatten, Expand, Tile", "[shape]") {
  auto r = InferText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[B, S, 4] X, int64[3] e = {2, 1, 1}, int64[3] t = {1, 2, 3}, float[B, 1] M, float[S, 1] M2) => (float[4, S, B] Y) {
      Y = Transpose <perm = [2, 1, 0]> (X)
      D = Transpose(X)
      F = Flatten <axis = 2> (X)
      E = Expand(M, e)
      T = Tile(X, t)
      sh = Shape(X)
      E2 = Expand(M2, sh)
    }
  )");
  CHECK(TypeAndShape(r.model.graph, "Y") == "float[4, S, B]");
  CHECK(TypeAndShape(r.model.graph, "D") == "float[4, S, B]");
  CHECK(TypeAndShape(r.model.graph, "F") == "float[B*S, 4]");
  CHECK(TypeAndShape(r.model.graph, "E") == "float[2, B, 1]");
  CHECK(TypeAndShape(r.model.graph, "T") == "float[B, 2*S, 12]");
  CHECK(TypeAndShape(r.model.graph, "E2") == "float[B, S, 4]");
}

}  // namespace
}  // namespace memopt

namespace memopt {
namespace {

TEST_CASE("Reshape/Unsqueeze whose rank comes from a huge declared length: unknown rank, no allocation", "[shape]") {
  // Found by fuzz_model_loader: a shape input declared int64[10^12] made shape inference reserve
  // 10^12 fresh dims (std::length_error, an abort in the CLI).
  auto r = testing::InferText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2, 3] X, int64[1000000000000] S, int64[1000000000000] A) => (float[2, 3] Z) {
      Z = Identity(X)
      Y = Reshape(X, S)
      U = Unsqueeze(X, A)
      C = ConstantOfShape(S)
    }
  )");
  CHECK(TypeAndShape(r.model.graph, "Y") == "float[?]");
  CHECK(TypeAndShape(r.model.graph, "U") == "float[?]");
  CHECK(TypeAndShape(r.model.graph, "C") == "float[?]");
  CHECK(testing::HasDiagnosticContaining(r.stats, "is past 1024"));
}

}  // namespace
}  // namespace memopt
