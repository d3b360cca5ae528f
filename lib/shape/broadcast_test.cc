#include "shape/broadcast.h"

#include "helpers/shape_test_util.h"

namespace memopt::shape {
namespace {

SymExpr S(const char* name) { return SymExpr::Symbol(name); }

TEST_CASE("BroadcastDim rules", "[shape]") {
  BroadcastNotes notes;
  bool conflict = false;
  CHECK(BroadcastDim(S("a"), S("a"), &notes, &conflict) == S("a"));
  CHECK(BroadcastDim(SymExpr(1), S("a"), &notes, &conflict) == S("a"));
  CHECK(BroadcastDim(S("a"), SymExpr(1), &notes, &conflict) == S("a"));
  CHECK(BroadcastDim(SymExpr(8), S("a"), &notes, &conflict) == SymExpr(8));
  CHECK(BroadcastDim(S("a"), SymExpr(8), &notes, &conflict) == SymExpr(8));
  CHECK_FALSE(conflict);
  const SymExpr m = BroadcastDim(S("a"), S("b"), &notes, &conflict);
  CHECK(m == SymExpr::Max(S("a"), S("b")));
  CHECK(notes.Admits(m, S("a")));
  CHECK(notes.Admits(m, S("b")));
  CHECK_FALSE(notes.Admits(m, S("c")));
  const SymExpr m2 = BroadcastDim(m, S("c"), &notes, &conflict);
  CHECK(notes.Admits(m2, S("a")));
  CHECK(notes.Admits(m2, S("c")));
  CHECK_FALSE(conflict);
  CHECK(BroadcastDim(SymExpr(3), SymExpr(4), &notes, &conflict) == SymExpr(4));
  CHECK(conflict);
}

TEST_CASE("BroadcastDim of an overflowed constant keeps the overflow", "[shape]") {
  // Found by fuzz_model_loader: two constant dims, one whose arithmetic overflowed int64.
  const SymExpr big = SymExpr(INT64_MAX) * SymExpr(4);
  REQUIRE(big.Overflowed());
  bool conflict = false;
  CHECK(BroadcastDim(big, SymExpr(3), nullptr, &conflict).Overflowed());
  CHECK(conflict);
  conflict = false;
  CHECK(BroadcastDim(SymExpr(3), big, nullptr, &conflict).Overflowed());
  CHECK(conflict);
}

TEST_CASE("BroadcastShapes aligns from the right", "[shape]") {
  BroadcastNotes notes;
  Shape a{S("b"), SymExpr(1), S("s")};
  Shape b{SymExpr(16), SymExpr(1)};
  Shape c{};
  BroadcastResult r = BroadcastShapes({&a, &b, &c}, &notes);
  CHECK(ShapeToString(r.shape) == "[b, 16, s]");
  CHECK(r.conflicts.empty());
  Shape d{SymExpr(3)};
  Shape e{SymExpr(2), SymExpr(4)};
  r = BroadcastShapes({&d, &e}, &notes);
  REQUIRE(r.conflicts.size() == 1);
  CHECK(r.conflicts[0] == "dim 1: 3 vs 4");
}

TEST_CASE("Broadcasting ops in a graph", "[shape]") {
  auto r = testing::InferText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[B, 1, S] X, float[16, 1] Y, bool[B, 1, 1, S] C, float z, int64[S, 1] i, int64[S] j) => (float[B, 16, S] Z) {
      Z = Mul(X, Y)
      W = Where(C, z, Z)
      L = Less(i, j)
      M = Max(X, Y, z)
    }
  )");
  CHECK(testing::TypeAndShape(r.model.graph, "Z") == "float[B, 16, S]");
  CHECK(testing::TypeAndShape(r.model.graph, "W") == "float[B, B, 16, S]");
  CHECK(testing::TypeAndShape(r.model.graph, "L") == "bool[S, S]");
  CHECK(testing::TypeAndShape(r.model.graph, "M") == "float[B, 16, S]");
}

}  // namespace
}  // namespace memopt::shape

namespace memopt::shape {
namespace {

TEST_CASE("BroadcastDim keeps ambiguous maxima flat", "[shape]") {
  BroadcastNotes notes;
  bool conflict = false;
  const SymExpr a = SymExpr::Symbol("a");
  const SymExpr b = SymExpr::Symbol("b");
  const SymExpr m = BroadcastDim(a, b, &notes, &conflict);
  CHECK(BroadcastDim(m, b, &notes, &conflict) == m);
  CHECK(BroadcastDim(a, m, &notes, &conflict) == m);
  CHECK(BroadcastDim(m, m, &notes, &conflict) == m);
}

}  // namespace
}  // namespace memopt::shape
