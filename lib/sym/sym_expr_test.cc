#include <algorithm>
#include <chrono>

#include <catch2/catch.hpp>

#include "sym/sym_expr.h"

namespace memopt {
namespace {

SymExpr S(const char* name) { return SymExpr::Symbol(name); }
Rational Q(int64_t n, int64_t d) { return Rational::Make(n, d); }

TEST_CASE("SymExpr canonicalizes polynomials", "[sym]") {
  SymExpr x = S("x"), a = S("a"), b = S("b");
  CHECK(x + x == x * 2);
  CHECK((a + b) * (a - b) == a * a - b * b);
  CHECK((a + b) * (a - b) == b * b * -1 + a * a);
  CHECK((x - x).IsZero());
  CHECK((a * b - b * a).IsZero());
  CHECK((a + 1) - a == SymExpr(1));
  CHECK(((a + 1) - a).IsConstant());
  CHECK(((a + 1) * (a + 1)).ToString() == "a**2 + 2*a + 1");
  CHECK(a * b == b * a);
  CHECK(a + b == b + a);
  CHECK(x.Scaled(Q(1, 2)) + x.Scaled(Q(1, 2)) == x);
  CHECK(SymExpr() == SymExpr(0));
  CHECK(SymExpr(Rational(5)) == SymExpr(5));
  CHECK(S("x") == S("x"));
  CHECK(S("x") != S("y"));
  CHECK(-(a - b) == b - a);
  SymExpr acc;
  for (int i = 0; i < 10; ++i) acc += a;
  CHECK(acc == a * 10);
}

TEST_CASE("SymExpr constants and accessors", "[sym]") {
  CHECK(SymExpr(42).AsInt() == 42);
  CHECK(SymExpr(42).IsConstant());
  CHECK(!SymExpr(42).IsZero());
  CHECK(SymExpr(Q(1, 2)).AsRational() == Q(1, 2));
  CHECK(!SymExpr(Q(1, 2)).AsInt());
  CHECK(!S("a").AsInt());
  CHECK(!S("a").IsConstant());
  CHECK((SymExpr(100000) * 3).AsInt() == 300000);
  CHECK((SymExpr(7) - 9).AsInt() == -2);
}

TEST_CASE("SymExpr prints like sympy str()", "[sym]") {
  SymExpr batch = S("batch"), seq = S("seq_len"), a = S("a"), b = S("b");
  CHECK((batch * seq).ToString() == "batch*seq_len");
  CHECK((batch * 2 + 1).ToString() == "2*batch + 1");
  CHECK((seq * seq).ToString() == "seq_len**2");
  CHECK((a * b * b * 3 - a).ToString() == "3*a*b**2 - a");
  CHECK(a.Scaled(Q(1, 2)).ToString() == "a/2");
  CHECK(a.Scaled(Q(3, 2)).ToString() == "3*a/2");
  CHECK(a.Scaled(Q(-3, 2)).ToString() == "-3*a/2");
  CHECK((a * b).Scaled(Q(3, 2)).ToString() == "3*a*b/2");
  CHECK(SymExpr(Q(-1, 2)).ToString() == "-1/2");
  CHECK(SymExpr(0).ToString() == "0");
  CHECK(SymExpr(-7).ToString() == "-7");
  CHECK((-a - b).ToString() == "-a - b");
  // Pure lex order over sorted names, not by degree: sympy prints a + b**2.
  CHECK((b * b + a).ToString() == "a + b**2");
  CHECK((a * b + a * a).ToString() == "a**2 + a*b");
  CHECK((a * b * b + a * a + b * b * b + a * b).ToString() == "a**2 + a*b**2 + a*b + b**3");
  // Names compare by code point: upper case and '_' before lower case.
  CHECK((S("a") + S("Z") + S("_b")).ToString() == "Z + _b + a");
  // sympy's special case: positive number plus a negative one-factor term prints number first.
  CHECK((SymExpr(4) - batch).ToString() == "4 - batch");
  CHECK((SymExpr(4) - a * 2).ToString() == "4 - 2*a");
  CHECK((SymExpr(4) - a * a).ToString() == "4 - a**2");
  CHECK((SymExpr(4) - a * b * 2).ToString() == "-2*a*b + 4");
  CHECK((a - 4).ToString() == "a - 4");
  CHECK((-a - 4).ToString() == "-a - 4");
  CHECK((SymExpr(Q(1, 2)) - a.Scaled(Q(1, 2))).ToString() == "1/2 - a/2");
}

TEST_CASE("SymExpr prints float coefficients like ORT's saving strings", "[sym]") {
  SymExpr batch = S("batch"), seq = S("seq_len"), a = S("a"), b = S("b");
  CHECK((S("input1_dim0") * 500 * 4).ToSympyString() == "2000.0*input1_dim0");
  CHECK((batch * seq * seq * 128).ToSympyString() == "128.0*batch*seq_len**2");
  CHECK((S("inputs_input_ids_dim0") * S("inputs_input_ids_dim1") * S("inputs_input_ids_dim1") * 128).ToSympyString() ==
        "128.0*inputs_input_ids_dim0*inputs_input_ids_dim1**2");
  CHECK((batch * seq * 20480 - batch * 20480).ToSympyString() == "20480.0*batch*seq_len - 20480.0*batch");
  CHECK(a.ToSympyString() == "1.0*a");
  CHECK((-a).ToSympyString() == "-1.0*a");
  CHECK(a.Scaled(Q(1, 2)).ToSympyString() == "0.5*a");
  CHECK(a.Scaled(Q(1, 3)).ToSympyString() == "0.333333333333333*a");
  CHECK(a.Scaled(Q(2, 3)).ToSympyString() == "0.666666666666667*a");
  CHECK(a.Scaled(Q(-5, 7)).ToSympyString() == "-0.714285714285714*a");
  CHECK((a * 100000000000000LL).ToSympyString() == "100000000000000.0*a");
  CHECK((a * 1000000000000000LL).ToSympyString() == "1.0e+15*a");
  CHECK((a * 1234567890123456LL).ToSympyString() == "1.23456789012346e+15*a");
  CHECK(a.Scaled(Q(1, 100000)).ToSympyString() == "1.0e-5*a");
  CHECK(a.Scaled(Q(1, 10000)).ToSympyString() == "0.0001*a");
  CHECK((a * 2 + 1).ToSympyString() == "2.0*a + 1.0");
  CHECK((SymExpr(4) - a).ToSympyString() == "4.0 - 1.0*a");
  CHECK((a * b + a * a * 3).ToSympyString() == "3.0*a**2 + 1.0*a*b");
  CHECK(SymExpr(2000).ToSympyString() == "2000.0");
  CHECK(SymExpr(0).ToSympyString() == "0");
}

TEST_CASE("SymExpr floor, ceiling and Mod follow Python semantics", "[sym]") {
  CHECK(SymExpr::FloorDiv(7, 2).AsInt() == 3);
  CHECK(SymExpr::FloorDiv(-7, 2).AsInt() == -4);
  CHECK(SymExpr::FloorDiv(7, -2).AsInt() == -4);
  CHECK(SymExpr::FloorDiv(-7, -2).AsInt() == 3);
  CHECK(SymExpr::CeilDiv(7, 2).AsInt() == 4);
  CHECK(SymExpr::CeilDiv(-7, 2).AsInt() == -3);
  CHECK(SymExpr::CeilDiv(7, -2).AsInt() == -3);
  CHECK(SymExpr::CeilDiv(6, 2).AsInt() == 3);
  CHECK(SymExpr::Mod(7, 3).AsInt() == 1);
  CHECK(SymExpr::Mod(-7, 3).AsInt() == 2);
  CHECK(SymExpr::Mod(7, -3).AsInt() == -2);
  CHECK(SymExpr::Mod(-7, -3).AsInt() == -1);
  CHECK(SymExpr::FloorDiv(SymExpr(Q(7, 2)), 1).AsInt() == 3);
  CHECK(SymExpr::Max(3, 5).AsInt() == 5);
  CHECK(SymExpr::Min(3, 5).AsInt() == 3);
  CHECK(SymExpr::Max(-3, -5).AsInt() == -3);
}

TEST_CASE("SymExpr simplifies exact symbolic division", "[sym]") {
  SymExpr a = S("a"), b = S("b"), seq = S("seq_len");
  CHECK(SymExpr::FloorDiv(a, 1) == a);
  CHECK(SymExpr::CeilDiv(a, 1) == a);
  CHECK(SymExpr::FloorDiv(a, a).AsInt() == 1);
  CHECK(SymExpr::CeilDiv(a + b, a + b).AsInt() == 1);
  CHECK(SymExpr::Mod(a, a).AsInt() == 0);
  CHECK(SymExpr::Mod(a, 1).AsInt() == 0);
  CHECK(SymExpr::Max(a, a) == a);
  CHECK(SymExpr::Min(a, a) == a);
  CHECK(SymExpr::FloorDiv(a * 6 + 3, 3) == a * 2 + 1);
  CHECK(SymExpr::FloorDiv(a * b * 4, b * 2) == a * 2);
  CHECK(SymExpr::CeilDiv(seq * 64, 64) == seq);
  CHECK(SymExpr::Mod(a * b * 4, b).AsInt() == 0);
  CHECK(SymExpr::FloorDiv(a * b + a, b + 1) == a);
  CHECK(SymExpr::Max(a + 1, a) == a + 1);
  CHECK(SymExpr::Min(a + 1, a) == a);
}

TEST_CASE("SymExpr keeps inexact functions as opaque atoms", "[sym]") {
  SymExpr a = S("a"), b = S("b"), c = S("c");
  CHECK(SymExpr::FloorDiv(a, b).ToString() == "floor(a/b)");
  CHECK(SymExpr::CeilDiv(a, b).ToString() == "ceiling(a/b)");
  CHECK(SymExpr::Mod(a, b).ToString() == "Mod(a, b)");
  CHECK(SymExpr::Max(b, a).ToString() == "Max(a, b)");
  CHECK(SymExpr::Min(a, 3).ToString() == "Min(3, a)");
  CHECK(SymExpr::Max(a + 1, b).ToString() == "Max(b, a + 1)");
  CHECK(SymExpr::FloorDiv(a, 2).ToString() == "floor(a/2)");
  CHECK(SymExpr::CeilDiv(a - 1, 2).ToString() == "ceiling(a/2 - 1/2)");
  CHECK(SymExpr::FloorDiv(a + 1, b + c).ToString() == "floor((a + 1)/(b + c))");
  CHECK(SymExpr::FloorDiv(a * 2, c).ToString() == "floor(2*a/c)");
  CHECK(SymExpr::FloorDiv(a, c * 2).ToString() == "floor(a/(2*c))");
  CHECK(SymExpr::FloorDiv(a, b * b).ToString() == "floor(a/b**2)");
  CHECK(SymExpr::FloorDiv(7, a * b).ToString() == "floor(7/(a*b))");
  CHECK((SymExpr::Mod(a, b) * 2 + SymExpr::CeilDiv(a, c)).ToString() == "2*(Mod(a, b)) + ceiling(a/c)");
  CHECK((SymExpr(4) - SymExpr::FloorDiv(a, b)).ToString() == "4 - floor(a/b)");
  CHECK((SymExpr::Max(a, b) * c + SymExpr::FloorDiv(a, b)).ToString() == "c*Max(a, b) + floor(a/b)");
  CHECK((SymExpr::FloorDiv(a, b) * 2).ToSympyString() == "2.0*floor(a/b)");
  // Max and Min are commutative; floor of a constant divisor is canonical.
  CHECK(SymExpr::Max(a, b) == SymExpr::Max(b, a));
  CHECK(SymExpr::FloorDiv(a * 2, 4) == SymExpr::FloorDiv(a, 2));
  CHECK(SymExpr::FloorDiv(a, b) != SymExpr::CeilDiv(a, b));
  CHECK(SymExpr::FloorDiv(a, b) * 2 - SymExpr::FloorDiv(a, b) == SymExpr::FloorDiv(a, b));
  // Symbols include those inside atoms.
  CHECK((SymExpr::Mod(c, b) + a).Symbols() == std::vector<std::string>{"a", "b", "c"});
}

TEST_CASE("SymExpr::DivExact", "[sym]") {
  SymExpr a = S("a"), b = S("b");
  auto q = SymExpr::DivExact(a * 6, 4);
  REQUIRE(q);
  CHECK(*q == a.Scaled(Q(3, 2)));  // exact rational quotient
  q = SymExpr::DivExact(a * b * 4 + a * 2, a * 2);
  REQUIRE(q);
  CHECK(*q == b * 2 + 1);
  CHECK(!SymExpr::DivExact(a * b + b, a));
  CHECK(!SymExpr::DivExact(a, 0));
  CHECK(!SymExpr::DivExact(a, b));
  q = SymExpr::DivExact((a + b) * 3, a + b);
  REQUIRE(q);
  CHECK(q->AsInt() == 3);
  q = SymExpr::DivExact(a * a - b * b, a - b);
  REQUIRE(q);
  CHECK(*q == a + b);
  CHECK(!SymExpr::DivExact(a * a + b * b, a - b));
  q = SymExpr::DivExact(0, a + 1);
  REQUIRE(q);
  CHECK(q->IsZero());
}

TEST_CASE("SymExpr evaluation and substitution", "[sym]") {
  SymExpr batch = S("batch"), seq = S("seq_len");
  auto dims = DimBindings::Parse("batch=8,seq_len=512");
  REQUIRE(dims.ok());
  SymExpr bytes = batch * seq * seq * 128;
  CHECK(bytes.EvaluateInt(*dims).value() == 8LL * 512 * 512 * 128);
  CHECK((batch.Scaled(Q(1, 2)) + 1).Evaluate(*dims).value() == Rational(5));
  CHECK(SymExpr::FloorDiv(seq, batch * 3).EvaluateInt(*dims).value() == 21);
  CHECK(SymExpr::Mod(seq, batch * 3).EvaluateInt(*dims).value() == 8);
  CHECK(SymExpr::Max(seq, batch).EvaluateInt(*dims).value() == 512);

  DimBindings partial;
  partial.Set("batch", 8);
  auto missing = (batch * seq + S("a_dim")).EvaluateInt(partial);
  REQUIRE(!missing.ok());
  CHECK(missing.status().code() == ErrorCode::kUsage);
  CHECK(missing.status().message() == "dim 'a_dim' is not bound; pass --dims a_dim=<value>");
  CHECK((batch * seq).Evaluate(partial).status().message() ==
        "dim 'seq_len' is not bound; pass --dims seq_len=<value>");

  auto frac = batch.Scaled(Q(1, 3)).EvaluateInt(partial);
  REQUIRE(!frac.ok());
  CHECK(frac.status().code() == ErrorCode::kInvalidInput);

  DimBindings huge;
  huge.Set("batch", INT64_MAX / 2);
  auto over = (batch * 4).EvaluateInt(huge);
  REQUIRE(!over.ok());
  CHECK(over.status().code() == ErrorCode::kInvalidInput);
  CHECK(over.status().message() == "byte count overflows 64 bits");

  DimBindings zero;
  zero.Set("batch", 0);
  auto div0 = SymExpr::FloorDiv(S("seq_len"), batch).Evaluate(*dims);
  CHECK(div0.ok());
  auto div_zero = SymExpr::FloorDiv(8, batch).Evaluate(zero);
  REQUIRE(!div_zero.ok());
  CHECK(div_zero.status().code() == ErrorCode::kInvalidInput);

  SymExpr sub = (batch * seq * 4 + seq).Substitute(partial);
  CHECK(sub == seq * 33);
  CHECK(sub.Symbols() == std::vector<std::string>{"seq_len"});
  CHECK(SymExpr::FloorDiv(seq, batch).Substitute(partial) == SymExpr::FloorDiv(seq, 8));
  CHECK(SymExpr::Max(batch, 3).Substitute(partial).AsInt() == 8);
  CHECK(SymExpr::FloorDiv(batch * seq, seq + batch).Substitute(*dims).AsInt() == 4096 / 520);
  CHECK((batch * seq).Substitute(DimBindings()) == batch * seq);
}

TEST_CASE("SymExpr overflow is flagged, never UB", "[sym]") {
  SymExpr big(INT64_MAX);
  SymExpr sum = big + 1;
  CHECK(sum.Overflowed());
  CHECK(!sum.AsInt());
  CHECK((sum * S("a")).Overflowed());
  CHECK((S("a") * INT64_MAX * 2).Overflowed());
  CHECK((S("a") * INT64_MAX + S("a") * INT64_MAX).Overflowed());
  CHECK(!(S("a") * INT64_MAX).Overflowed());
  auto r = sum.Evaluate(DimBindings());
  REQUIRE(!r.ok());
  CHECK(r.status().message() == "byte count overflows 64 bits");
}

TEST_CASE("SymExpr ordering is a deterministic total order", "[sym]") {
  SymExpr a = S("a"), b = S("b");
  std::vector<SymExpr> v = {b, SymExpr(3), a + b, a, SymExpr(-1), a * 2, a * a};
  std::sort(v.begin(), v.end());
  std::vector<std::string> printed;
  for (const auto& e : v) printed.push_back(e.ToString());
  CHECK(printed == std::vector<std::string>{"-1", "3", "a**2", "a", "2*a", "b", "a + b"});
  CHECK((a <=> a) == std::strong_ordering::equal);
  CHECK((a <=> S("a")) == std::strong_ordering::equal);
  CHECK(((a < b) != (b < a)));
}

TEST_CASE("NumElements and ShapeToString", "[sym]") {
  Shape shape = {S("batch"), SymExpr(512)};
  CHECK(NumElements(shape) == S("batch") * 512);
  CHECK(NumElements({}).AsInt() == 1);
  CHECK(ShapeToString(shape) == "[batch, 512]");
  CHECK(ShapeToString({}) == "[]");
  CHECK(ShapeToString({S("batch") * S("seq") + 1, SymExpr(3)}) == "[batch*seq + 1, 3]");
}

TEST_CASE("SymExpr shape arithmetic is fast", "[sym]") {
  // Byte sizes of 20k [batch, seq_len, hidden] tensors: guards against accidental quadratic work.
  auto start = std::chrono::steady_clock::now();
  SymExpr batch = S("batch"), seq = S("seq_len");
  SymExpr total;
  for (int i = 0; i < 20000; ++i) {
    Shape shape = {batch, seq, SymExpr(768 + (i % 4) * 768)};
    total = total + NumElements(shape) * 4;
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(total.Symbols() == std::vector<std::string>{"batch", "seq_len"});
  CHECK(seconds < 2.0);  // about 0.01 s optimized; generous for sanitizer and debug builds
}

}  // namespace
}  // namespace memopt
