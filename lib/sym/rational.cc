// Exact int64 rationals with overflow detection: every operation that would leave int64 returns
// a value with the sticky `overflow` flag set (value 0/1) instead of invoking undefined behaviour.
#include <numeric>

#include "sym/sym_expr.h"

namespace memopt {
namespace {

uint64_t Magnitude(int64_t v) { return v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v); }

Rational OverflowValue() {
  Rational r;
  r.overflow = true;
  return r;
}

/// (neg ? -1 : 1) * n / d for coprime magnitudes, d > 0; overflow when it does not fit.
Rational FromMagnitudes(bool neg, uint64_t n, uint64_t d) {
  constexpr uint64_t kMax = static_cast<uint64_t>(INT64_MAX);
  if (d > kMax) return OverflowValue();
  Rational r;
  r.den = static_cast<int64_t>(d);
  if (n == 0) {
    r.den = 1;
  } else if (!neg) {
    if (n > kMax) return OverflowValue();
    r.num = static_cast<int64_t>(n);
  } else {
    if (n > kMax + 1) return OverflowValue();
    r.num = static_cast<int64_t>(0 - n);  // two's complement: INT64_MIN when n == 2^63
  }
  return r;
}

}  // namespace

Rational Rational::Make(int64_t n, int64_t d) {
  if (d == 0) return OverflowValue();  // division by zero: no meaningful value
  uint64_t un = Magnitude(n), ud = Magnitude(d);
  uint64_t g = std::gcd(un, ud);
  return FromMagnitudes((n < 0) != (d < 0), un / g, ud / g);
}

std::string Rational::ToString() const {
  if (den == 1) return std::to_string(num);
  return std::to_string(num) + "/" + std::to_string(den);
}

Rational operator+(const Rational& a, const Rational& b) {
  if (a.overflow || b.overflow) return OverflowValue();
  int64_t n = 0, d = 0, x = 0, y = 0;
  if (a.den == 1 && b.den == 1) {
    if (__builtin_add_overflow(a.num, b.num, &n)) return OverflowValue();
    return Rational(n);
  }
  int64_t g = static_cast<int64_t>(std::gcd(static_cast<uint64_t>(a.den), static_cast<uint64_t>(b.den)));
  if (__builtin_mul_overflow(a.num, b.den / g, &x) || __builtin_mul_overflow(b.num, a.den / g, &y) ||
      __builtin_add_overflow(x, y, &n) || __builtin_mul_overflow(a.den / g, b.den, &d)) {
    return OverflowValue();
  }
  return Rational::Make(n, d);
}

Rational Rational::operator-() const {
  if (overflow || num == INT64_MIN) return OverflowValue();
  Rational r = *this;
  r.num = -num;
  return r;
}

Rational operator-(const Rational& a, const Rational& b) {
  if (a.overflow || b.overflow) return OverflowValue();
  if (b.num == INT64_MIN) {
    // -b does not fit; a - b fits only when a is negative enough: compute as (a + (-(b+1))) + 1.
    if (b.den != 1) return OverflowValue();
    return (a + Rational(INT64_MAX)) + Rational(1);
  }
  return a + (-b);
}

Rational operator*(const Rational& a, const Rational& b) {
  if (a.overflow || b.overflow) return OverflowValue();
  if (a.num == 0 || b.num == 0) return Rational(0);
  if (a.den == 1 && b.den == 1) {
    int64_t n = 0;
    if (__builtin_mul_overflow(a.num, b.num, &n)) return OverflowValue();
    return Rational(n);
  }
  // Cross-cancel so the result is already in lowest terms.
  uint64_t g1 = std::gcd(Magnitude(a.num), static_cast<uint64_t>(b.den));
  uint64_t g2 = std::gcd(Magnitude(b.num), static_cast<uint64_t>(a.den));
  uint64_t an = Magnitude(a.num) / g1, bn = Magnitude(b.num) / g2;
  uint64_t ad = static_cast<uint64_t>(a.den) / g2, bd = static_cast<uint64_t>(b.den) / g1;
  uint64_t un = 0, ud = 0;
  if (__builtin_mul_overflow(an, bn, &un) || __builtin_mul_overflow(ad, bd, &ud)) return OverflowValue();
  return FromMagnitudes((a.num < 0) != (b.num < 0), un, ud);
}

Rational operator/(const Rational& a, const Rational& b) {
  if (a.overflow || b.overflow || b.num == 0) return OverflowValue();
  Rational inv = FromMagnitudes(b.num < 0, static_cast<uint64_t>(b.den), Magnitude(b.num));
  return a * inv;
}

std::strong_ordering operator<=>(const Rational& a, const Rational& b) {
  __int128 lhs = static_cast<__int128>(a.num) * b.den;
  __int128 rhs = static_cast<__int128>(b.num) * a.den;
  return lhs <=> rhs;
}

}  // namespace memopt
