// Internal representation of SymExpr, shared by the lib/sym/*.cc files only (not a public API).
//
// An expression is a sum of terms `coeff * atom1**e1 * atom2**e2 ...`. Atoms are dim symbols or
// opaque function nodes (floor, ceiling, Mod, Max, Min) over two SymExprs. The canonical form:
//   - factors inside a monomial are sorted by CompareAtoms (symbols by name, then functions by key),
//     each atom at most once, exponents >= 1;
//   - terms are sorted by CompareMonomials, which is sympy's default print order (pure lex over the
//     sorted atoms, bigger exponent first, the constant term last), monomials unique, no zero terms.
// So two canonical polynomials are equal exactly when their term lists are equal.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sym/sym_expr.h"

namespace memopt {
namespace sym_internal {

enum class AtomKind : uint8_t { kSymbol, kFloorDiv, kCeilDiv, kMod, kMax, kMin };

struct Atom {
  AtomKind kind = AtomKind::kSymbol;
  std::string key;  ///< symbol: its name; function: its printed form, e.g. "floor(a/b)"
  SymExpr a, b;     ///< operands of a function atom (floor/ceiling atoms keep b == 1 when b is constant)
};
using AtomPtr = std::shared_ptr<const Atom>;

struct Factor {
  AtomPtr atom;
  int64_t exp = 1;
};
using Monomial = std::vector<Factor>;

struct Term {
  Rational coeff;
  Monomial mono;  ///< empty for the constant term
};

/// <0 when x sorts before y: symbols first (by name), then function atoms (by key).
int CompareAtoms(const Atom& x, const Atom& y);
/// <0 when x prints before y (sympy's lex order); 0 when the monomials are equal.
int CompareMonomials(const Monomial& x, const Monomial& y);

/// Printed form of a function atom; used both for printing and as its canonical key.
std::string FunctionKey(AtomKind kind, const SymExpr& a, const SymExpr& b);

/// sympy's str() of a 53-bit Float inside a product: 15 significant digits, trailing zeros stripped,
/// fixed notation when the leading digit's exponent is in (-5, 15), else "1.5e+20" / "1.0e-5".
std::string SympyFloat(double value);

}  // namespace sym_internal

struct SymExpr::Rep {
  std::vector<sym_internal::Term> terms;  ///< canonical (see the file comment)
  bool overflow = false;                  ///< some coefficient arithmetic overflowed (sticky)
};

/// Access to SymExpr's private representation for the implementation files.
struct SymExprAccess {
  static const SymExpr::Rep& rep(const SymExpr& e) { return *e.rep_; }
  static SymExpr Make(std::shared_ptr<const SymExpr::Rep> rep) { return SymExpr(std::move(rep)); }
};

}  // namespace memopt
