// Symbolic dimension arithmetic: polynomials with rational coefficients over named dims
// (`batch`, `seq_len`, ...), plus opaque atoms for the few non-polynomial shape functions
// (floor/ceil division, Mod, Max, Min). Expressions are kept canonical (sorted, merged terms),
// so structural equality is semantic equality for polynomials.
//
// Printing follows sympy's `str()` so tables match ORT's Python output:
//   ToString()             -> integer style:  "batch*seq_len", "2*batch + 1", "seq_len**2"
//   ToSympyString()        -> float style:    "2000.0*input1_dim0", "20480.0*batch*seq_len - 20480.0*batch"
// Term order is sympy's default (pure lex): atoms are sorted (dim symbols by name in code-point
// order, then function atoms), and a term with a higher power of an earlier atom comes first, so
// "a**2 + a*b + b**3 + 2" and "a + b**2" (not by total degree). The constant term comes last, except
// sympy's special case of a positive number plus one negative single-factor term: "4 - batch".
// Factors inside a term are sorted the same way. Float style prints coefficients as sympy prints
// 53-bit Floats (15 significant digits: "0.333333333333333*a", "1.0e+15*a"). One deliberate
// difference: a constant-only expression prints "2000.0" where sympy's top level gives
// "2000.00000000000" (and "0" for zero).
// Verified against sympy 1.14 on ~2,300 random polynomials (both styles identical); for nested
// floor/Mod/Max/Min, sympy applies extra rewrites (flattening Max(Max(..)), Mod(a + 4, 4) ->
// Mod(a, 4), ...) that memopt does not, so those strings can differ.
#pragma once

#include <compare>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/status.h"

namespace memopt {

/// Exact rational number num/den with den > 0 and gcd(num, den) == 1.
/// Arithmetic that would overflow int64 sets `overflow` (sticky) instead of invoking UB.
struct Rational {
  int64_t num = 0;
  int64_t den = 1;
  bool overflow = false;

  Rational() = default;
  Rational(int64_t n) : num(n) {}  // NOLINT: implicit from integers
  static Rational Make(int64_t n, int64_t d);  ///< normalized; d == 0 sets `overflow`

  bool IsInteger() const { return den == 1; }
  bool IsZero() const { return num == 0; }
  double ToDouble() const { return static_cast<double>(num) / static_cast<double>(den); }
  std::string ToString() const;  ///< "3", "-1/2"

  friend Rational operator+(const Rational& a, const Rational& b);
  friend Rational operator-(const Rational& a, const Rational& b);
  friend Rational operator*(const Rational& a, const Rational& b);
  friend Rational operator/(const Rational& a, const Rational& b);  ///< b must be non-zero
  Rational operator-() const;
  friend bool operator==(const Rational& a, const Rational& b) { return a.num == b.num && a.den == b.den; }
  friend std::strong_ordering operator<=>(const Rational& a, const Rational& b);
};

class DimBindings;

/// A symbolic dimension / element-count / byte-count expression. Cheap to copy.
class SymExpr {
 public:
  SymExpr();                      ///< zero
  SymExpr(int64_t value);         // NOLINT: implicit from integers
  explicit SymExpr(Rational value);
  static SymExpr Symbol(std::string_view name);

  // Non-polynomial functions. They simplify when the result is exact (both constant, with Python
  // semantics: floor toward -inf, Mod takes b's sign; equal operands; b dividing a with an integral
  // quotient; Max/Min of operands that differ by a constant), and otherwise become an opaque atom
  // printed as floor(a/b), ceiling(a/b), Mod(a, b), Max(a, b), Min(a, b). A constant zero divisor
  // stays opaque and makes Evaluate fail. Dims are assumed to be integers (floor(a/1) == a).
  static SymExpr FloorDiv(const SymExpr& a, const SymExpr& b);
  static SymExpr CeilDiv(const SymExpr& a, const SymExpr& b);
  static SymExpr Mod(const SymExpr& a, const SymExpr& b);
  static SymExpr Max(const SymExpr& a, const SymExpr& b);
  static SymExpr Min(const SymExpr& a, const SymExpr& b);

  /// a / b when b divides a exactly as a polynomial; nullopt otherwise (also for b == 0). The
  /// quotient is the exact rational one: DivExact(6*a, 4) == 3*a/2, so callers that need integers
  /// must check the coefficients. Works for any b (constant, single term, or a sum, by lex-order
  /// long division, e.g. (a**2 - b**2)/(a - b) == a + b), treating function atoms as variables.
  static std::optional<SymExpr> DivExact(const SymExpr& a, const SymExpr& b);

  friend SymExpr operator+(const SymExpr& a, const SymExpr& b);
  friend SymExpr operator-(const SymExpr& a, const SymExpr& b);
  friend SymExpr operator*(const SymExpr& a, const SymExpr& b);
  SymExpr operator-() const;
  SymExpr& operator+=(const SymExpr& b) { return *this = *this + b; }
  SymExpr& operator*=(const SymExpr& b) { return *this = *this * b; }
  /// Multiplies by a rational (e.g. a save ratio of 1/2).
  SymExpr Scaled(const Rational& r) const;

  bool IsConstant() const;
  /// True when the expression is a plain polynomial in dim symbols (no floor/ceiling/Mod/Max/Min).
  bool IsPolynomial() const;
  bool IsZero() const;
  std::optional<int64_t> AsInt() const;          ///< when constant and integral
  std::optional<Rational> AsRational() const;    ///< when constant
  /// True when some coefficient arithmetic overflowed int64 (the value is then meaningless).
  bool Overflowed() const;

  /// Names of the free dims, sorted and unique (including those inside opaque atoms).
  std::vector<std::string> Symbols() const;

  std::string ToString() const;       ///< integer style (see file comment)
  std::string ToSympyString() const;  ///< float style, as sympy prints ORT's saving strings

  /// Value with every symbol bound. Errors: kUsage naming the first unbound dim (sorted order),
  /// kInvalidInput for overflow ("byte count overflows 64 bits") or a zero divisor in an atom.
  /// EvaluateInt also fails (kInvalidInput) when the value is not an integer.
  Expected<Rational> Evaluate(const DimBindings& dims) const;
  Expected<int64_t> EvaluateInt(const DimBindings& dims) const;
  /// Substitutes bound symbols and simplifies; unbound symbols stay symbolic.
  SymExpr Substitute(const DimBindings& dims) const;

  friend bool operator==(const SymExpr& a, const SymExpr& b);
  /// Canonical total order: constants first (by value), then fewer terms first, then term by term
  /// in print order. Consistent with ==; the overflow flag is ignored by both.
  friend std::strong_ordering operator<=>(const SymExpr& a, const SymExpr& b);

  struct Rep;  ///< implementation detail (terms and atoms)

 private:
  std::shared_ptr<const Rep> rep_;
  explicit SymExpr(std::shared_ptr<const Rep> rep) : rep_(std::move(rep)) {}
  friend struct SymExprAccess;
};

using Shape = std::vector<SymExpr>;

SymExpr NumElements(const Shape& shape);          ///< product of dims; 1 for a scalar
std::string ShapeToString(const Shape& shape);   ///< "[batch, 512]"

/// Values bound to named dims, from `--dims batch=8,seq_len=512` (the `name:value` form works too).
class DimBindings {
 public:
  DimBindings() = default;
  /// Parses "k=v,k2=v2"; empty text gives no bindings. Values must be integers >= 0.
  /// Errors are usage errors naming the bad piece.
  static Expected<DimBindings> Parse(std::string_view text);

  void Set(const std::string& name, int64_t value) { values_[name] = value; }
  std::optional<int64_t> Get(const std::string& name) const;
  bool empty() const { return values_.empty(); }
  const std::map<std::string, int64_t>& values() const { return values_; }

 private:
  std::map<std::string, int64_t> values_;
};

/// `expr` at `dims`, with every dim `dims` leaves unbound set to `unbound_value`; nullopt on
/// overflow.
std::optional<Rational> EvaluateWithDefault(const SymExpr& expr, const DimBindings& dims, int64_t unbound_value);

/// Value given to unbound dims when ordering groups (and locating the peak) without --dims.
constexpr int64_t kUnboundDimForOrdering = 1024;

}  // namespace memopt
