#include <catch2/catch.hpp>

#include "sym/sym_expr.h"

namespace memopt {
namespace {

TEST_CASE("Rational normalizes sign and lowest terms", "[sym]") {
  Rational r = Rational::Make(6, -4);
  CHECK(r.num == -3);
  CHECK(r.den == 2);
  CHECK(r.ToString() == "-3/2");
  CHECK(Rational::Make(0, -5).ToString() == "0");
  CHECK(Rational::Make(0, -5).den == 1);
  CHECK(Rational::Make(10, 5).IsInteger());
  CHECK(Rational(7).ToString() == "7");
}

TEST_CASE("Rational arithmetic is exact", "[sym]") {
  Rational half = Rational::Make(1, 2), third = Rational::Make(1, 3);
  CHECK(half + third == Rational::Make(5, 6));
  CHECK(half - third == Rational::Make(1, 6));
  CHECK(half * third == Rational::Make(1, 6));
  CHECK(half / third == Rational::Make(3, 2));
  CHECK(-half == Rational::Make(-1, 2));
  CHECK((half <=> third) == std::strong_ordering::greater);
  CHECK((Rational(-1) <=> Rational::Make(-1, 2)) == std::strong_ordering::less);
  CHECK((Rational(INT64_MAX) <=> Rational(INT64_MIN)) == std::strong_ordering::greater);
}

TEST_CASE("Rational overflow sets a sticky flag", "[sym]") {
  Rational big(INT64_MAX);
  CHECK((big + Rational(1)).overflow);
  CHECK((big * Rational(2)).overflow);
  CHECK((Rational(INT64_MIN) * Rational(-1)).overflow);
  CHECK((-Rational(INT64_MIN)).overflow);
  CHECK(Rational::Make(1, 0).overflow);
  CHECK((Rational(1) / Rational(0)).overflow);
  Rational o = big + Rational(1);
  CHECK((o + Rational(1)).overflow);  // sticky
  CHECK((o * Rational(0)).overflow);
  CHECK(!(big + Rational(-1)).overflow);
  CHECK((Rational(INT64_MIN) - Rational(1)).overflow);
  CHECK((Rational(-1) - Rational(INT64_MIN)) == Rational(INT64_MAX));
  CHECK((Rational::Make(1, INT64_MAX) + Rational::Make(1, INT64_MAX - 1)).overflow);
}

}  // namespace
}  // namespace memopt
