#include "helpers/shape_test_util.h"
#include "shape/infer_context.h"

namespace memopt {
namespace {

using testing::InferText;
using testing::TypeAndShape;
using testing::ValuesOf;

TEST_CASE("SliceIndices follows ONNX clamping", "[shape]") {
  using shape::SliceIndices;
  CHECK(SliceIndices(5, 1, INT64_MAX, 1) == std::vector<int64_t>{1, 2, 3, 4});
  CHECK(SliceIndices(5, 0, -1, 1) == std::vector<int64_t>{0, 1, 2, 3});
  CHECK(SliceIndices(5, -2, 100, 1) == std::vector<int64_t>{3, 4});
  CHECK(SliceIndices(5, -1, INT64_MIN, -1) == std::vector<int64_t>{4, 3, 2, 1, 0});
  CHECK(SliceIndices(5, 4, 0, -2) == std::vector<int64_t>{4, 2});
  CHECK(SliceIndices(5, 0, 5, 2) == std::vector<int64_t>{0, 2, 4});
  CHECK(SliceIndices(5, 7, 9, 1).empty());
  CHECK(SliceIndices(0, 0, 1, 1).empty());
}

TEST_CASE("SlicedDim on symbolic dims", "[shape]") {
  using shape::SlicedDim;
  const SymExpr s = SymExpr::Symbol("s");
  CHECK(SlicedDim(s, SymExpr(1), SymExpr(INT64_MAX), 1) == s - SymExpr(1));
  CHECK(SlicedDim(s, SymExpr(0), SymExpr(-1), 1) == s - SymExpr(1));
  CHECK(SlicedDim(s, SymExpr(0), SymExpr(2147483647), 1) == s);
  CHECK(SlicedDim(s, SymExpr(-1), SymExpr(INT64_MIN), -1) == s);
  CHECK(SlicedDim(s, SymExpr(0), SymExpr(INT64_MAX), 2) == SymExpr::CeilDiv(s, SymExpr(2)));
  CHECK(SlicedDim(s, SymExpr(2), SymExpr(5), 1) == SymExpr(3));
  CHECK(SlicedDim(SymExpr(10), SymExpr(-3), SymExpr(INT64_MAX), 1) == SymExpr(3));
  CHECK(SlicedDim(SymExpr(10), SymExpr(0), s, 1) == s);
}

TEST_CASE("Slice: negative and INT_MAX ends, steps, attribute form", "[shape]") {
  auto r = InferText(R"(
    <ir_version: 8, opset_import: ["" : 15]>
    g (float[B, S, 4096] X, int64[2] L, int64[1] z = {0}, int64[1] m1 = {-1}, int64[1] one = {1},
       int64[1] big = {9223372036854775807}, int64[1] two = {2}, int64[1] neg = {-2})
      => (float[B, ?, 4096] Y) {
      Y = Slice(X, z, m1, one, one)
      Lb = Slice(L, one, big, z, one)
      T = Slice(X, neg, big, two)
      St = Slice(X, z, big, one, two)
    }
  )");
  CHECK(TypeAndShape(r.model.graph, "Y") == "float[B, S - 1, 4096]");
  CHECK(TypeAndShape(r.model.graph, "Lb") == "int64[1]");
  CHECK(TypeAndShape(r.model.graph, "T") == "float[B, S, 2]");
  CHECK(TypeAndShape(r.model.graph, "St") == "float[B, " + SymExpr::CeilDiv(SymExpr::Symbol("S"), SymExpr(2)).ToString() + ", 4096]");

  auto attr = InferText(R"(
    <ir_version: 7, opset_import: ["" : 9]>
    g (float[B, 10] X) => (float[B, 3] Y) {
      Y = Slice <starts = [2], ends = [-5], axes = [1]> (X)
    }
  )");
  CHECK(TypeAndShape(attr.model.graph, "Y") == "float[B, 3]");
}

TEST_CASE("Slice of a Shape tensor propagates values", "[shape]") {
  auto r = InferText(R"(
    <ir_version: 8, opset_import: ["" : 15]>
    g (float[B, S, H] X, int64[1] one = {1}, int64[1] big = {9223372036854775807}) => (int64[2] Y) {
      sh = Shape(X)
      Y = Slice(sh, one, big)
      last = Shape <start = -1> (X)
    }
  )");
  CHECK(ValuesOf(r.model.graph, "Y") == "[S, H]");
  CHECK(TypeAndShape(r.model.graph, "last") == "int64[1]");
  CHECK(ValuesOf(r.model.graph, "last") == "[H]");
}

TEST_CASE("Gather shapes and values", "[shape]") {
  auto r = InferText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[V, 768] E, int64[B, S] ids, int64[2] idx = {2, 0}) => (float[B, S, 768] Y) {
      Y = Gather(E, ids)
      sh = Shape(Y)
      pick = Gather(sh, idx)
      G1 = Gather <axis = 1> (E, idx)
    }
  )");
  CHECK(TypeAndShape(r.model.graph, "Y") == "float[B, S, 768]");
  CHECK(ValuesOf(r.model.graph, "pick") == "[768, B]");
  CHECK(TypeAndShape(r.model.graph, "G1") == "float[V, 2]");
}

TEST_CASE("Pad, TopK, OneHot, NonZero, GatherElements", "[shape]") {
  auto r = InferText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[B, S] X, int64[4] p = {0, 1, 0, 2}, int64[1] k = {5}, int64[B] lab, int64 depth = {10},
       float[2] vals, int64[B, 3] gi) => (float[B, ?] Y) {
      Y = Pad(X, p)
      V, I = TopK(X, k)
      O = OneHot(lab, depth, vals)
      N = NonZero(X)
      GE = GatherElements <axis = 1> (X, gi)
    }
  )");
  CHECK(TypeAndShape(r.model.graph, "Y") == "float[B, S + 3]");
  CHECK(TypeAndShape(r.model.graph, "V") == "float[B, 5]");
  CHECK(TypeAndShape(r.model.graph, "I") == "int64[B, 5]");
  CHECK(TypeAndShape(r.model.graph, "O") == "float[B, 10]");
  CHECK(TypeAndShape(r.model.graph, "GE") == "float[B, 3]");
  const std::string nz = TypeAndShape(r.model.graph, "N");
  CHECK(nz.rfind("int64[2, nonzero__", 0) == 0);
  CHECK(testing::HasDiagnosticContaining(r.stats, "data-dependent: number of non-zero elements"));
}

// TorchScript writes nn.Upsample's scales as Concat(Constant [1, 1], Constant [2, 2]).
TEST_CASE("Resize: scales from a Concat of float constants", "[shape]") {
  auto r = InferText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[B, 3, 4, 6] X) => (float[B, 3, 8, 12] Y) {
      keep = Constant <value = float[2] {1, 1}> ()
      twice = Constant <value = float[2] {2, 2}> ()
      scales = Concat <axis = 0> (keep, twice)
      Y = Resize <mode = "nearest"> (X, , scales)
    }
  )");
  CHECK(TypeAndShape(r.model.graph, "Y") == "float[B, 3, 8, 12]");
}

}  // namespace
}  // namespace memopt
