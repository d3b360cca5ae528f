#include "helpers/shape_test_util.h"

namespace memopt {
namespace {

using testing::InferText;
using testing::TypeAndShape;
using testing::ValuesOf;

TEST_CASE("Value propagation: Constant, Range, ConstantOfShape, Cast, ReduceProd", "[shape]") {
  auto r = InferText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[B, S, 8] X, int64 zero = {0}, int64 one = {1}) => (int64[3] Y) {
      c = Constant <value = int64[3] {2, -1, 4}> ()
      ci = Constant <value_int = 7> ()
      cs = Constant <value_ints = [1, 2]> ()
      sh = Shape(X)
      n = Gather(sh, one)
      rg = Range(zero, n, one)
      three = Constant <value = int64[1] {3}> ()
      rc = Range(zero, ci, one)
      z = ConstantOfShape <value = int64[1] {5}> (three)
      f = Cast <to = 1> (sh)
      back = Cast <to = 7> (f)
      prod = ReduceProd <keepdims = 0> (sh)
      Y = Add(z, c)
      sz = Size(X)
    }
  )");
  CHECK(ValuesOf(r.model.graph, "c") == "[2, -1, 4]");
  CHECK(TypeAndShape(r.model.graph, "ci") == "int64[]");
  CHECK(ValuesOf(r.model.graph, "ci") == "[7]");
  CHECK(ValuesOf(r.model.graph, "cs") == "[1, 2]");
  CHECK(TypeAndShape(r.model.graph, "rg") == "int64[S]");
  CHECK(TypeAndShape(r.model.graph, "rc") == "int64[7]");
  CHECK(ValuesOf(r.model.graph, "rc") == "[0, 1, 2, 3, 4, 5, 6]");
  CHECK(TypeAndShape(r.model.graph, "z") == "int64[3]");
  CHECK(ValuesOf(r.model.graph, "z") == "[5, 5, 5]");
  CHECK(ValuesOf(r.model.graph, "back") == "[B, S, 8]");
  CHECK(TypeAndShape(r.model.graph, "prod") == "int64[]");
  CHECK(ValuesOf(r.model.graph, "prod") == "[" + (SymExpr(8) * SymExpr::Symbol("B") * SymExpr::Symbol("S")).ToString() + "]");
  CHECK(ValuesOf(r.model.graph, "Y") == "[7, 4, 9]");
  CHECK(ValuesOf(r.model.graph, "sz") == ValuesOf(r.model.graph, "prod"));
}

TEST_CASE("Value propagation: Equal/Where on shapes (the -1 masking pattern)", "[shape]") {
  auto r = InferText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[B, S] X, bool[B, 1, 1, S] M, int64[4] neg = {-1, -1, -1, -1}, int64[4] ones = {1, 1, 1, 1},
       int64[1] ax = {0}, int64[1] c16 = {16}, int64 i0 = {0}, int64 i1 = {1}) => (bool[B, 16, S, S] Y) {
      sh = Shape(X)
      b = Gather(sh, i0)
      s = Gather(sh, i1)
      bu = Unsqueeze(b, ax)
      su = Unsqueeze(s, ax)
      shape = Concat <axis = 0> (bu, c16, su, su)
      eq = Equal(shape, neg)
      fixed = Where(eq, ones, shape)
      Y = Expand(M, fixed)
      q = Div(s, c16)
      m = Mod(s, c16)
      neg2 = Neg(s)
      sub = Sub(s, i1)
    }
  )");
  CHECK(ValuesOf(r.model.graph, "eq") == "[0, 0, 0, 0]");
  CHECK(ValuesOf(r.model.graph, "fixed") == "[B, 16, S, S]");
  CHECK(TypeAndShape(r.model.graph, "Y") == "bool[B, 16, S, S]");
  CHECK(ValuesOf(r.model.graph, "q") == "[" + SymExpr::FloorDiv(SymExpr::Symbol("S"), SymExpr(16)).ToString() + "]");
  CHECK(ValuesOf(r.model.graph, "m") == "[" + SymExpr::Mod(SymExpr::Symbol("S"), SymExpr(16)).ToString() + "]");
  CHECK(ValuesOf(r.model.graph, "neg2") == "[-S]");
  CHECK(ValuesOf(r.model.graph, "sub") == "[S - 1]");
}

TEST_CASE("Value propagation: integer division truncates toward zero", "[shape]") {
  auto r = InferText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (int64[3] a = {7, -7, 6}, int64[3] b = {2, 2, -4}) => (int64[3] Y) {
      Y = Div(a, b)
      M = Mod(a, b)
      F = Mod <fmod = 1> (a, b)
    }
  )");
  CHECK(ValuesOf(r.model.graph, "Y") == "[3, -3, -1]");
  CHECK(ValuesOf(r.model.graph, "M") == "[1, 1, -2]");
  CHECK(ValuesOf(r.model.graph, "F") == "[1, -1, 2]");
}

TEST_CASE("Value propagation: elementwise ops with a missing or extra input track no values", "[shape]") {
  // Found by fuzz_model_loader: a one-input Div read a second argument past the end. Whatever the
  // shape rule makes of such nodes, value tracking must not run (nor crash) on them.
  auto model = LoadModelFromText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (int64[2] a = {6, 4}, int64[2] b = {2, 2}) => (int64[2] Y) {
      d1 = Div(a)
      s1 = Sub(a)
      w2 = Where(a, b)
      m3 = Mul(a, b, b)
      Y = Add(a, b)
    }
  )");
  REQUIRE(model.ok());
  (void)InferShapes(model->graph);
  for (const char* name : {"d1", "s1", "w2", "m3"}) {
    INFO(name);
    CHECK(ValuesOf(model->graph, name) == "none");
  }
  CHECK(ValuesOf(model->graph, "Y") == "[8, 6]");
}

TEST_CASE("Value propagation: Tile, Expand, Concat of 2-D, Slice with step", "[shape]") {
  auto r = InferText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (int64[2] a = {3, 4}, int64[1] rep = {2}, int64[2, 1] col = {1, 2}, int64[2] e = {2, 3},
       int64[1] s0 = {0}, int64[1] end = {9223372036854775807}, int64[1] st = {2}, int64[2,1] col2 = {5, 6}) => (int64[4] Y) {
      Y = Tile(a, rep)
      E = Expand(col, e)
      C = Concat <axis = 1> (col, col2)
      T = Tile(Y, rep)
      S = Slice(T, s0, end, s0, st)
    }
  )");
  CHECK(ValuesOf(r.model.graph, "Y") == "[3, 4, 3, 4]");
  CHECK(ValuesOf(r.model.graph, "E") == "[1, 1, 1, 2, 2, 2]");
  CHECK(ValuesOf(r.model.graph, "C") == "[1, 5, 2, 6]");
  CHECK(ValuesOf(r.model.graph, "S") == "[3, 3, 3, 3]");
}

// TorchScript's F.pad(x, (0, 1, 0, 1)) on an NCHW tensor: the ONNX pads come from reversing the
// (begin, end) pairs of the padded dims, a Transpose and a Reshape of constants.
TEST_CASE("Value propagation: Transpose, and TorchScript's pad chain down to Pad's pads", "[shape]") {
  auto r = InferText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[B, 3, 4, 4] X) => (float[B, 3, 5, 5] Y) {
      t = Constant <value = int64[2, 3] {1, 2, 3, 4, 5, 6}> ()
      tt = Transpose <perm = [1, 0]> (t)
      td = Transpose(t)
      p = Constant <value = int64[4] {0, 1, 0, 1}> ()
      len = Constant <value = int64 {8}> ()
      four = Constant <value = int64 {4}> ()
      rest = Sub(len, four)
      zero = Constant <value = int64[1] {0}> ()
      rest1 = Unsqueeze(rest, zero)
      zeros = ConstantOfShape(rest1)
      all = Concat <axis = 0> (p, zeros)
      pairs_shape = Constant <value = int64[2] {-1, 2}> ()
      pairs = Reshape(all, pairs_shape)
      start = Constant <value = int64[1] {-1}> ()
      end = Constant <value = int64[1] {-9223372036854775807}> ()
      step = Constant <value = int64[1] {-1}> ()
      reversed = Slice(pairs, start, end, zero, step)
      cols = Transpose <perm = [1, 0]> (reversed)
      flat_shape = Constant <value = int64[1] {-1}> ()
      pads = Reshape(cols, flat_shape)
      Y = Pad(X, pads)
    }
  )");
  CHECK(ValuesOf(r.model.graph, "tt") == "[1, 4, 2, 5, 3, 6]");
  CHECK(ValuesOf(r.model.graph, "td") == "[1, 4, 2, 5, 3, 6]");
  CHECK(ValuesOf(r.model.graph, "pads") == "[0, 0, 0, 0, 0, 0, 1, 1]");
  CHECK(TypeAndShape(r.model.graph, "Y") == "float[B, 3, 5, 5]");
}

// BLOOM's position ids: Range(0, seq_len, 1)[-1] + 1 is seq_len, and [1] is 1.
TEST_CASE("Value propagation: Gather from a Range of symbolic length", "[shape]") {
  auto r = InferText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[B, S] X) => (int64 last) {
      sh = Shape(X)
      one = Constant <value = int64 {1}> ()
      zero = Constant <value = int64 {0}> ()
      s = Gather(sh, one)
      pos = Range(zero, s, one)
      minus_one = Constant <value = int64 {-1}> ()
      lastpos = Gather(pos, minus_one)
      last = Add(lastpos, one)
      second = Gather(pos, one)
      two = Constant <value = int64 {2}> ()
      evens = Range(one, s, two)
      tail = Gather(evens, minus_one)
    }
  )");
  CHECK(ValuesOf(r.model.graph, "lastpos") == "[S - 1]");
  CHECK(ValuesOf(r.model.graph, "last") == "[S]");
  CHECK(ValuesOf(r.model.graph, "second") == "[1]");
}

}  // namespace
}  // namespace memopt
