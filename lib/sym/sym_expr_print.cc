// Printing of SymExpr the way sympy's str() prints the same expression, so memopt's tables match
// ONNX Runtime's Python output:
//   - terms in lex order over the sorted atoms (the canonical term order), constant last, except
//     sympy's special case "positive constant + (negative number)*x" which prints as "4 - x";
//   - integer style: "2*a*b**2", "3*a/2", "-a"; float style: every coefficient a 15-digit Float,
//     "1.0*a", "0.5*a", "2000.0";
//   - Mod inside a product is parenthesised, as sympy does: "2*(Mod(a, b))".
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "sym/sym_expr.h"
#include "sym/sym_expr_rep.h"

namespace memopt {

using sym_internal::Atom;
using sym_internal::AtomKind;
using sym_internal::Monomial;
using sym_internal::Term;

namespace sym_internal {

std::string SympyFloat(double value) {
  if (value == 0) return "0.0";
  if (!std::isfinite(value)) return std::isnan(value) ? "nan" : (value < 0 ? "-oo" : "oo");
  std::string sign = value < 0 ? "-" : "";
  // Exact leading decimal digits of the binary value (glibc prints them exactly).
  char buf[96];
  std::snprintf(buf, sizeof buf, "%.40e", std::fabs(value));
  std::string digits(1, buf[0]);
  const char* p = buf + 2;
  while (*p != 'e') digits += *p++;
  int exponent = std::atoi(p + 1);
  // mpmath's to_str with dps=15: take dps+3 digits rounded down, then round half up at dps digits.
  constexpr int kDps = 15;
  digits.resize(kDps + 3);
  if (digits[kDps] >= '5') {
    digits.resize(kDps);
    int i = kDps - 1;
    while (i >= 0 && digits[i] == '9') --i;
    if (i >= 0) {
      digits[i] = static_cast<char>(digits[i] + 1);
      for (int k = i + 1; k < kDps; ++k) digits[k] = '0';
    } else {
      digits = "1" + std::string(kDps - 1, '0');
      ++exponent;
    }
  } else {
    digits.resize(kDps);
  }
  bool fixed = -5 < exponent && exponent < kDps;
  size_t split = 1;
  if (fixed) {
    if (exponent < 0) {
      digits = std::string(static_cast<size_t>(-exponent), '0') + digits;
    } else {
      split = static_cast<size_t>(exponent) + 1;
      if (split > digits.size()) digits += std::string(split - digits.size(), '0');
    }
  }
  std::string s = digits.substr(0, split) + "." + digits.substr(split);
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s += '0';
  if (fixed) return sign + s;
  return sign + s + (exponent >= 0 ? "e+" : "e") + std::to_string(exponent);
}

}  // namespace sym_internal

namespace {

enum class Style { kInt, kFloat };

const SymExpr::Rep& R(const SymExpr& e) { return SymExprAccess::rep(e); }

std::string Magnitude(int64_t v) {
  uint64_t m = v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  return std::to_string(m);
}

/// "a*b**2*floor(x/y)"; Mod atoms are parenthesised inside products and under powers. A dim named
/// like a number (exporters name dims by the sizes they traced: "8") is quoted, "'8'", so that it
/// does not read as the number.
std::string FactorsString(const Monomial& mono, bool mod_parens) {
  std::string s;
  for (const auto& f : mono) {
    if (!s.empty()) s += '*';
    bool paren = f.atom->kind == AtomKind::kMod && (mod_parens || f.exp > 1);
    const std::string& key = f.atom->key;
    const bool numeric_name = f.atom->kind == AtomKind::kSymbol && !key.empty() && key[0] >= '0' && key[0] <= '9';
    s += paren ? "(" + key + ")" : numeric_name ? "'" + key + "'" : key;
    if (f.exp != 1) s += "**" + std::to_string(f.exp);
  }
  return s;
}

/// A term without its sign.
std::string TermBody(const Term& t, Style style) {
  const Rational& c = t.coeff;
  bool negative = c.num < 0;
  if (style == Style::kFloat) {
    std::string s = sym_internal::SympyFloat(std::fabs(c.ToDouble()));
    if (t.mono.empty()) return s;
    return s + "*" + FactorsString(t.mono, !negative);
  }
  std::string num = Magnitude(c.num);
  if (t.mono.empty()) return c.den == 1 ? num : num + "/" + std::to_string(c.den);
  bool bare = num == "1" && c.den == 1 && t.mono.size() == 1;
  std::string s = num == "1" ? "" : num + "*";
  s += FactorsString(t.mono, !negative && !bare);
  if (c.den != 1) s += "/" + std::to_string(c.den);
  return s;
}

std::string PolyString(const SymExpr::Rep& rep, Style style) {
  const auto& terms = rep.terms;
  if (terms.empty()) return "0";
  size_t n = terms.size();
  // sympy prints Add(positive number, negative number * x) number first: "4 - a", "4.0 - 1.0*a".
  bool swap = n == 2 && terms[1].mono.empty() && terms[1].coeff.num > 0 && terms[0].coeff.num < 0 &&
              terms[0].mono.size() == 1;
  std::string s;
  for (size_t k = 0; k < n; ++k) {
    const Term& t = terms[swap ? 1 - k : k];
    bool negative = t.coeff.num < 0;
    if (k == 0) {
      if (negative) s += '-';
    } else {
      s += negative ? " - " : " + ";
    }
    s += TermBody(t, style);
  }
  return s;
}

bool IsSum(const SymExpr& e) { return R(e).terms.size() > 1; }

/// Numerator/denominator parts of one side of a quotient: a single term contributes its
/// coefficient and factors, a sum contributes "(sum)". Mod factors are parenthesised, as sympy
/// does in quotients.
void QuotientSide(const SymExpr& e, Rational* coeff, std::vector<std::string>* items) {
  const auto& terms = R(e).terms;
  if (terms.size() == 1) {
    *coeff = terms[0].coeff;
    for (const auto& f : terms[0].mono) items->push_back(FactorsString({f}, true));
  } else {
    *coeff = Rational(1);
    items->push_back("(" + e.ToString() + ")");
  }
}

std::string Join(const std::vector<std::string>& items) {
  std::string s;
  for (const auto& item : items) s += (s.empty() ? "" : "*") + item;
  return s;
}

/// "a/b", "(a + 1)/b", "2*a/(3*c)", "a/2 - 1/2" (a constant divisor distributes, as in sympy).
std::string QuotientString(const SymExpr& a, const SymExpr& b) {
  if (b.IsZero()) return (IsSum(a) ? "(" + a.ToString() + ")" : a.ToString()) + "/0";
  std::optional<Rational> cb = b.AsRational();
  if (cb) return a.Scaled(Rational(1) / *cb).ToString();
  Rational ca(1), cd(1);
  std::vector<std::string> num, den;
  QuotientSide(a, &ca, &num);
  QuotientSide(b, &cd, &den);
  Rational c = ca / cd;
  if (Magnitude(c.num) != "1") num.insert(num.begin(), Magnitude(c.num));
  if (c.den != 1) den.insert(den.begin(), std::to_string(c.den));
  std::string n = num.empty() ? "1" : Join(num);
  std::string d = Join(den);
  if (den.size() > 1) d = "(" + d + ")";
  return (c.num < 0 ? "-" : "") + n + "/" + d;
}

}  // namespace

namespace sym_internal {

std::string FunctionKey(AtomKind kind, const SymExpr& a, const SymExpr& b) {
  switch (kind) {
    case AtomKind::kFloorDiv:
      return "floor(" + QuotientString(a, b) + ")";
    case AtomKind::kCeilDiv:
      return "ceiling(" + QuotientString(a, b) + ")";
    case AtomKind::kMod:
      return "Mod(" + a.ToString() + ", " + b.ToString() + ")";
    case AtomKind::kMax:
      return "Max(" + a.ToString() + ", " + b.ToString() + ")";
    case AtomKind::kMin:
      return "Min(" + a.ToString() + ", " + b.ToString() + ")";
    case AtomKind::kSymbol:
      break;
  }
  return a.ToString();
}

}  // namespace sym_internal

std::string SymExpr::ToString() const { return PolyString(*rep_, Style::kInt); }
std::string SymExpr::ToSympyString() const { return PolyString(*rep_, Style::kFloat); }

}  // namespace memopt
