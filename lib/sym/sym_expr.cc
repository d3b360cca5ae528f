// SymExpr: canonical polynomials with rational coefficients over dim symbols and opaque function
// atoms. Representation and ordering rules: sym_expr_rep.h. Printing: sym_expr_print.cc.
#include "sym/sym_expr.h"

#include <algorithm>
#include <utility>

#include "sym/sym_expr_rep.h"

namespace memopt {

using sym_internal::Atom;
using sym_internal::AtomKind;
using sym_internal::AtomPtr;
using sym_internal::CompareMonomials;
using sym_internal::Factor;
using sym_internal::Monomial;
using sym_internal::Term;

namespace sym_internal {

int CompareAtoms(const Atom& x, const Atom& y) {
  if (&x == &y) return 0;
  bool xs = x.kind == AtomKind::kSymbol, ys = y.kind == AtomKind::kSymbol;
  if (xs != ys) return xs ? -1 : 1;
  int c = x.key.compare(y.key);
  return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

int CompareMonomials(const Monomial& x, const Monomial& y) {
  size_t n = std::min(x.size(), y.size());
  for (size_t i = 0; i < n; ++i) {
    // The first atom (in atom order) where the exponents differ decides: the bigger exponent is the
    // lex-greater monomial, which sympy prints first.
    int c = x[i].atom == y[i].atom ? 0 : CompareAtoms(*x[i].atom, *y[i].atom);
    if (c != 0) return c;
    if (x[i].exp != y[i].exp) return x[i].exp > y[i].exp ? -1 : 1;
  }
  if (x.size() == y.size()) return 0;
  return x.size() > y.size() ? -1 : 1;
}

}  // namespace sym_internal

namespace {

using Rep = SymExpr::Rep;
using RepPtr = std::shared_ptr<const Rep>;

const Rep& R(const SymExpr& e) { return SymExprAccess::rep(e); }

RepPtr NewConstRep(Rational r) {
  auto rep = std::make_shared<Rep>();
  rep->overflow = r.overflow;
  r.overflow = false;
  if (!r.IsZero()) rep->terms.push_back(Term{r, {}});
  return rep;
}

// Small integers are by far the most common constants in shape arithmetic: share their reps.
constexpr int64_t kCacheLo = -64;
constexpr int64_t kCacheHi = 4096;

const RepPtr* ConstCache() {
  static const RepPtr* cache = [] {
    auto* reps = new RepPtr[kCacheHi - kCacheLo + 1];  // intentionally leaked: lives for the process
    for (int64_t v = kCacheLo; v <= kCacheHi; ++v) reps[v - kCacheLo] = NewConstRep(Rational(v));
    return reps;
  }();
  return cache;
}

RepPtr ConstRep(const Rational& r) {
  if (!r.overflow && r.den == 1 && r.num >= kCacheLo && r.num <= kCacheHi) return ConstCache()[r.num - kCacheLo];
  return NewConstRep(r);
}

SymExpr ConstExpr(Rational r, bool overflow) {
  if (overflow) r.overflow = true;
  return SymExprAccess::Make(ConstRep(r));
}

/// Value of a constant rep (zero for no terms); false when the rep has symbols.
bool ConstValue(const Rep& rep, Rational* out) {
  if (rep.terms.empty()) {
    *out = Rational(0);
    return true;
  }
  if (rep.terms.size() == 1 && rep.terms[0].mono.empty()) {
    *out = rep.terms[0].coeff;
    return true;
  }
  return false;
}

/// Wraps already canonical terms.
SymExpr FromTerms(std::vector<Term> terms, bool overflow) {
  if (terms.empty()) return ConstExpr(Rational(0), overflow);
  if (terms.size() == 1 && terms[0].mono.empty()) return ConstExpr(terms[0].coeff, overflow);
  auto rep = std::make_shared<Rep>();
  rep->terms = std::move(terms);
  rep->overflow = overflow;
  return SymExprAccess::Make(std::move(rep));
}

SymExpr WithOverflow(const SymExpr& e, bool overflow) {
  if (!overflow || e.Overflowed()) return e;
  auto rep = std::make_shared<Rep>(R(e));
  rep->overflow = true;
  return SymExprAccess::Make(std::move(rep));
}

SymExpr AtomExpr(AtomPtr atom) {
  auto rep = std::make_shared<Rep>();
  rep->overflow = atom->a.Overflowed() || atom->b.Overflowed();
  rep->terms.push_back(Term{Rational(1), {Factor{std::move(atom), 1}}});
  return SymExprAccess::Make(std::move(rep));
}

/// Sorts terms into canonical order, merging equal monomials and dropping zero coefficients.
SymExpr Canonicalize(std::vector<Term> terms, bool overflow) {
  std::sort(terms.begin(), terms.end(),
            [](const Term& x, const Term& y) { return CompareMonomials(x.mono, y.mono) < 0; });
  std::vector<Term> out;
  out.reserve(terms.size());
  for (Term& t : terms) {
    if (!out.empty() && CompareMonomials(out.back().mono, t.mono) == 0) {
      out.back().coeff = out.back().coeff + t.coeff;
    } else {
      out.push_back(std::move(t));
    }
    if (out.back().coeff.overflow) overflow = true;
  }
  std::erase_if(out, [](const Term& t) { return t.coeff.IsZero(); });
  return FromTerms(std::move(out), overflow);
}

Monomial MulMonomials(const Monomial& x, const Monomial& y, bool* overflow) {
  Monomial out;
  out.reserve(x.size() + y.size());
  size_t i = 0, j = 0;
  while (i < x.size() || j < y.size()) {
    int c = i == x.size() ? 1 : j == y.size() ? -1 : sym_internal::CompareAtoms(*x[i].atom, *y[j].atom);
    if (c < 0) {
      out.push_back(x[i++]);
    } else if (c > 0) {
      out.push_back(y[j++]);
    } else {
      Factor f = x[i];
      if (__builtin_add_overflow(f.exp, y[j].exp, &f.exp)) *overflow = true;
      out.push_back(std::move(f));
      ++i;
      ++j;
    }
  }
  return out;
}

/// x / y as monomials when y's exponents are all covered by x's; nullopt otherwise.
std::optional<Monomial> DivMonomials(const Monomial& x, const Monomial& y) {
  Monomial out;
  size_t j = 0;
  for (const Factor& f : x) {
    if (j < y.size() && sym_internal::CompareAtoms(*f.atom, *y[j].atom) == 0) {
      if (f.exp < y[j].exp) return std::nullopt;
      if (f.exp > y[j].exp) out.push_back(Factor{f.atom, f.exp - y[j].exp});
      ++j;
    } else {
      out.push_back(f);
    }
  }
  if (j != y.size()) return std::nullopt;
  return out;
}

SymExpr AddReps(const SymExpr& a, const SymExpr& b, bool negate_b) {
  const Rep& x = R(a);
  const Rep& y = R(b);
  bool overflow = x.overflow || y.overflow;
  std::vector<Term> out;
  out.reserve(x.terms.size() + y.terms.size());
  size_t i = 0, j = 0;
  auto push = [&](Rational c, const Monomial& m) {
    if (c.overflow) overflow = true;
    if (!c.IsZero()) out.push_back(Term{c, m});
  };
  while (i < x.terms.size() || j < y.terms.size()) {
    int c = i == x.terms.size() ? 1 : j == y.terms.size() ? -1 : CompareMonomials(x.terms[i].mono, y.terms[j].mono);
    if (c < 0) {
      out.push_back(x.terms[i++]);
      continue;
    }
    Rational cy = negate_b ? -y.terms[j].coeff : y.terms[j].coeff;
    if (c > 0) {
      push(cy, y.terms[j].mono);
    } else {
      push(x.terms[i].coeff + cy, x.terms[i].mono);
      ++i;
    }
    ++j;
  }
  return FromTerms(std::move(out), overflow);
}

SymExpr Power(const SymExpr& base, int64_t exp) {
  SymExpr result(1), b = base;
  while (exp > 0) {
    if (exp & 1) result = result * b;
    exp >>= 1;
    if (exp > 0) b = b * b;
  }
  return result;
}

bool HasIntegerCoefficients(const SymExpr& e) {
  for (const Term& t : R(e).terms) {
    if (!t.coeff.IsInteger()) return false;
  }
  return true;
}

Rational FloorOf(const Rational& q) {
  if (q.overflow) return q;
  int64_t n = q.num / q.den;
  if (q.num % q.den != 0 && q.num < 0) n -= 1;
  return Rational(n);
}

Rational CeilOf(const Rational& q) {
  if (q.overflow) return q;
  int64_t n = q.num / q.den;
  if (q.num % q.den != 0 && q.num > 0) n += 1;
  return Rational(n);
}

/// The function on constants; nullopt for a zero divisor.
std::optional<Rational> ApplyConst(AtomKind kind, const Rational& a, const Rational& b) {
  switch (kind) {
    case AtomKind::kFloorDiv:
      if (b.IsZero()) return std::nullopt;
      return FloorOf(a / b);
    case AtomKind::kCeilDiv:
      if (b.IsZero()) return std::nullopt;
      return CeilOf(a / b);
    case AtomKind::kMod:  // Python semantics: the result has the sign of b
      if (b.IsZero()) return std::nullopt;
      return a - b * FloorOf(a / b);
    case AtomKind::kMax:
      return a < b ? b : a;
    case AtomKind::kMin:
      return b < a ? b : a;
    case AtomKind::kSymbol:
      break;
  }
  return std::nullopt;
}

SymExpr MakeFunction(AtomKind kind, const SymExpr& a, const SymExpr& b) {
  auto atom = std::make_shared<Atom>();
  atom->kind = kind;
  atom->a = a;
  atom->b = b;
  atom->key = sym_internal::FunctionKey(kind, a, b);
  return AtomExpr(std::move(atom));
}

/// floor / ceiling / Mod with the exact simplifications; otherwise an opaque atom.
SymExpr DivLike(AtomKind kind, const SymExpr& a, const SymExpr& b) {
  bool overflow = a.Overflowed() || b.Overflowed();
  Rational ca, cb;
  bool a_const = ConstValue(R(a), &ca);
  bool b_const = ConstValue(R(b), &cb);
  if (b_const && cb.IsZero()) return MakeFunction(kind, a, b);  // Evaluate reports the division by zero
  if (a_const && b_const) return ConstExpr(*ApplyConst(kind, ca, cb), overflow);
  if (a == b) return ConstExpr(Rational(kind == AtomKind::kMod ? 0 : 1), overflow);
  std::optional<SymExpr> q = SymExpr::DivExact(a, b);
  if (q && HasIntegerCoefficients(*q)) return kind == AtomKind::kMod ? ConstExpr(Rational(0), overflow) : *q;
  // floor(a/c) for a constant c is kept as floor((a/c)/1), so equal quotients get equal atoms.
  if (b_const && q && kind != AtomKind::kMod) return MakeFunction(kind, *q, SymExpr(1));
  return MakeFunction(kind, a, b);
}

SymExpr Lattice(AtomKind kind, const SymExpr& a, const SymExpr& b) {
  if (a == b) return WithOverflow(a, b.Overflowed());
  SymExpr diff = a - b;
  Rational d;
  if (!diff.Overflowed() && ConstValue(R(diff), &d)) {
    bool a_wins = kind == AtomKind::kMax ? !d.IsZero() && d.num > 0 : d.num < 0;
    return WithOverflow(a_wins ? a : b, a.Overflowed() || b.Overflowed());
  }
  // Max and Min are commutative: keep the operands in canonical order.
  if (b < a) return MakeFunction(kind, b, a);
  return MakeFunction(kind, a, b);
}

void CollectSymbols(const Rep& rep, std::vector<std::string>* out) {
  for (const Term& t : rep.terms) {
    for (const Factor& f : t.mono) {
      if (f.atom->kind == AtomKind::kSymbol) {
        out->push_back(f.atom->key);
      } else {
        CollectSymbols(R(f.atom->a), out);
        CollectSymbols(R(f.atom->b), out);
      }
    }
  }
}

Rational PowerOf(Rational base, int64_t exp) {
  Rational result(1);
  while (exp > 0 && !result.overflow) {
    if (exp & 1) result = result * base;
    exp >>= 1;
    if (exp > 0) base = base * base;
  }
  return result;
}

Status OverflowError() { return InvalidInput("byte count overflows 64 bits"); }

Expected<Rational> EvaluateRep(const Rep& rep, const DimBindings& dims);

Expected<Rational> EvaluateAtom(const Atom& atom, const DimBindings& dims) {
  if (atom.kind == AtomKind::kSymbol) {
    std::optional<int64_t> v = dims.Get(atom.key);
    if (!v) return UsageError("dim '" + atom.key + "' is not bound; pass --dims " + atom.key + "=<value>");
    return Rational(*v);
  }
  MEMOPT_ASSIGN_OR_RETURN(Rational a, EvaluateRep(R(atom.a), dims));
  MEMOPT_ASSIGN_OR_RETURN(Rational b, EvaluateRep(R(atom.b), dims));
  std::optional<Rational> r = ApplyConst(atom.kind, a, b);
  if (!r) return InvalidInput("division by zero while evaluating '" + atom.key + "'");
  if (r->overflow) return OverflowError();
  return *r;
}

Expected<Rational> EvaluateRep(const Rep& rep, const DimBindings& dims) {
  if (rep.overflow) return OverflowError();
  Rational sum(0);
  for (const Term& t : rep.terms) {
    Rational product = t.coeff;
    for (const Factor& f : t.mono) {
      MEMOPT_ASSIGN_OR_RETURN(Rational v, EvaluateAtom(*f.atom, dims));
      product = product * PowerOf(v, f.exp);
    }
    sum = sum + product;
    if (sum.overflow) return OverflowError();
  }
  return sum;
}

SymExpr SubstituteAtom(const AtomPtr& atom, const DimBindings& dims) {
  switch (atom->kind) {
    case AtomKind::kSymbol: {
      std::optional<int64_t> v = dims.Get(atom->key);
      return v ? SymExpr(*v) : AtomExpr(atom);
    }
    case AtomKind::kFloorDiv:
      return SymExpr::FloorDiv(atom->a.Substitute(dims), atom->b.Substitute(dims));
    case AtomKind::kCeilDiv:
      return SymExpr::CeilDiv(atom->a.Substitute(dims), atom->b.Substitute(dims));
    case AtomKind::kMod:
      return SymExpr::Mod(atom->a.Substitute(dims), atom->b.Substitute(dims));
    case AtomKind::kMax:
      return SymExpr::Max(atom->a.Substitute(dims), atom->b.Substitute(dims));
    case AtomKind::kMin:
      return SymExpr::Min(atom->a.Substitute(dims), atom->b.Substitute(dims));
  }
  return AtomExpr(atom);
}

}  // namespace

SymExpr::SymExpr() : rep_(ConstRep(Rational(0))) {}
SymExpr::SymExpr(int64_t value) : rep_(ConstRep(Rational(value))) {}
SymExpr::SymExpr(Rational value) : rep_(ConstRep(value)) {}

SymExpr SymExpr::Symbol(std::string_view name) {
  auto atom = std::make_shared<Atom>();
  atom->kind = AtomKind::kSymbol;
  atom->key = std::string(name);
  return AtomExpr(std::move(atom));
}

SymExpr SymExpr::FloorDiv(const SymExpr& a, const SymExpr& b) { return DivLike(AtomKind::kFloorDiv, a, b); }
SymExpr SymExpr::CeilDiv(const SymExpr& a, const SymExpr& b) { return DivLike(AtomKind::kCeilDiv, a, b); }
SymExpr SymExpr::Mod(const SymExpr& a, const SymExpr& b) { return DivLike(AtomKind::kMod, a, b); }
SymExpr SymExpr::Max(const SymExpr& a, const SymExpr& b) { return Lattice(AtomKind::kMax, a, b); }
SymExpr SymExpr::Min(const SymExpr& a, const SymExpr& b) { return Lattice(AtomKind::kMin, a, b); }

std::optional<SymExpr> SymExpr::DivExact(const SymExpr& a, const SymExpr& b) {
  const Rep& x = R(a);
  const Rep& y = R(b);
  if (y.terms.empty()) return std::nullopt;  // division by zero
  if (x.terms.empty()) return WithOverflow(a, y.overflow);
  Rational cb;
  if (ConstValue(y, &cb)) return WithOverflow(a.Scaled(Rational(1) / cb), y.overflow);
  if (y.terms.size() == 1) {
    // Dividing every term by one monomial keeps the lex order, so the result stays canonical.
    std::vector<Term> out;
    out.reserve(x.terms.size());
    bool overflow = x.overflow || y.overflow;
    for (const Term& t : x.terms) {
      std::optional<Monomial> m = DivMonomials(t.mono, y.terms[0].mono);
      if (!m) return std::nullopt;
      Rational c = t.coeff / y.terms[0].coeff;
      if (c.overflow) overflow = true;
      out.push_back(Term{c, std::move(*m)});
    }
    return FromTerms(std::move(out), overflow);
  }
  // Polynomial long division in lex order: b divides a exactly iff the remainder vanishes, and then
  // every step's leading monomial is divisible by b's. The step cap bounds pathological inputs.
  constexpr int kMaxSteps = 256;
  SymExpr rem = a, quot;
  const Term& lead_b = y.terms[0];
  for (int step = 0; step < kMaxSteps; ++step) {
    const Rep& r = R(rem);
    if (r.terms.empty()) return WithOverflow(quot, x.overflow || y.overflow);
    std::optional<Monomial> m = DivMonomials(r.terms[0].mono, lead_b.mono);
    if (!m) return std::nullopt;
    SymExpr t = FromTerms({Term{r.terms[0].coeff / lead_b.coeff, std::move(*m)}}, false);
    quot = quot + t;
    rem = rem - t * b;
    if (rem.Overflowed()) return std::nullopt;
  }
  return std::nullopt;
}

SymExpr operator+(const SymExpr& a, const SymExpr& b) {
  const Rep& x = R(a);
  const Rep& y = R(b);
  if (x.terms.empty() && !x.overflow) return b;
  if (y.terms.empty() && !y.overflow) return a;
  Rational ca, cb;
  if (ConstValue(x, &ca) && ConstValue(y, &cb)) return ConstExpr(ca + cb, x.overflow || y.overflow);
  return AddReps(a, b, false);
}

SymExpr operator-(const SymExpr& a, const SymExpr& b) {
  const Rep& x = R(a);
  const Rep& y = R(b);
  if (y.terms.empty() && !y.overflow) return a;
  Rational ca, cb;
  if (ConstValue(x, &ca) && ConstValue(y, &cb)) return ConstExpr(ca - cb, x.overflow || y.overflow);
  return AddReps(a, b, true);
}

SymExpr operator*(const SymExpr& a, const SymExpr& b) {
  const Rep& x = R(a);
  const Rep& y = R(b);
  Rational c;
  if (ConstValue(x, &c)) return WithOverflow(b.Scaled(c), x.overflow);
  if (ConstValue(y, &c)) return WithOverflow(a.Scaled(c), y.overflow);
  bool overflow = x.overflow || y.overflow;
  std::vector<Term> products;
  products.reserve(x.terms.size() * y.terms.size());
  for (const Term& tx : x.terms) {
    for (const Term& ty : y.terms) {
      products.push_back(Term{tx.coeff * ty.coeff, MulMonomials(tx.mono, ty.mono, &overflow)});
    }
  }
  if (x.terms.size() == 1 || y.terms.size() == 1) {
    // A monomial times a canonical polynomial keeps its order (lex is a monomial order).
    for (const Term& t : products) overflow = overflow || t.coeff.overflow;
    std::erase_if(products, [](const Term& t) { return t.coeff.IsZero(); });
    return FromTerms(std::move(products), overflow);
  }
  return Canonicalize(std::move(products), overflow);
}

SymExpr SymExpr::operator-() const { return Scaled(Rational(-1)); }

SymExpr SymExpr::Scaled(const Rational& r) const {
  const Rep& x = *rep_;
  bool overflow = x.overflow || r.overflow;
  if (r.IsZero()) return ConstExpr(Rational(0), overflow);
  if (r == Rational(1)) return WithOverflow(*this, overflow);
  Rational c;
  if (ConstValue(x, &c)) return ConstExpr(c * r, overflow);
  std::vector<Term> out = x.terms;
  for (Term& t : out) {
    t.coeff = t.coeff * r;
    if (t.coeff.overflow) overflow = true;
  }
  std::erase_if(out, [](const Term& t) { return t.coeff.IsZero(); });
  return FromTerms(std::move(out), overflow);
}

bool SymExpr::IsPolynomial() const {
  for (const auto& term : SymExprAccess::rep(*this).terms) {
    for (const auto& factor : term.mono) {
      if (factor.atom->kind != sym_internal::AtomKind::kSymbol) return false;
    }
  }
  return true;
}

bool SymExpr::IsConstant() const {
  Rational c;
  return ConstValue(*rep_, &c);
}

bool SymExpr::IsZero() const { return rep_->terms.empty(); }

std::optional<Rational> SymExpr::AsRational() const {
  Rational c;
  if (rep_->overflow || !ConstValue(*rep_, &c)) return std::nullopt;
  return c;
}

std::optional<int64_t> SymExpr::AsInt() const {
  std::optional<Rational> r = AsRational();
  if (!r || !r->IsInteger()) return std::nullopt;
  return r->num;
}

bool SymExpr::Overflowed() const { return rep_->overflow; }

std::vector<std::string> SymExpr::Symbols() const {
  std::vector<std::string> names;
  CollectSymbols(*rep_, &names);
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

Expected<Rational> SymExpr::Evaluate(const DimBindings& dims) const {
  // Report the first unbound dim in sorted order, whatever order the terms are evaluated in.
  for (const std::string& name : Symbols()) {
    if (!dims.Get(name)) return UsageError("dim '" + name + "' is not bound; pass --dims " + name + "=<value>");
  }
  return EvaluateRep(*rep_, dims);
}

Expected<int64_t> SymExpr::EvaluateInt(const DimBindings& dims) const {
  MEMOPT_ASSIGN_OR_RETURN(Rational r, Evaluate(dims));
  if (!r.IsInteger()) {
    return InvalidInput("'" + ToString() + "' evaluates to " + r.ToString() + ", which is not an integer");
  }
  return r.num;
}

SymExpr SymExpr::Substitute(const DimBindings& dims) const {
  if (dims.empty() || IsConstant()) return *this;
  std::vector<std::string> names = Symbols();
  if (std::none_of(names.begin(), names.end(), [&](const std::string& n) { return dims.Get(n).has_value(); })) {
    return *this;
  }
  SymExpr sum;
  for (const Term& t : rep_->terms) {
    SymExpr product(t.coeff);
    for (const Factor& f : t.mono) product = product * Power(SubstituteAtom(f.atom, dims), f.exp);
    sum = sum + product;
  }
  return WithOverflow(sum, rep_->overflow);
}

bool operator==(const SymExpr& a, const SymExpr& b) {
  if (a.rep_ == b.rep_) return true;
  const auto& x = a.rep_->terms;
  const auto& y = b.rep_->terms;
  if (x.size() != y.size()) return false;
  for (size_t i = 0; i < x.size(); ++i) {
    if (!(x[i].coeff == y[i].coeff) || CompareMonomials(x[i].mono, y[i].mono) != 0) return false;
  }
  return true;
}

std::strong_ordering operator<=>(const SymExpr& a, const SymExpr& b) {
  if (a.rep_ == b.rep_) return std::strong_ordering::equal;
  Rational ca, cb;
  bool a_const = ConstValue(*a.rep_, &ca), b_const = ConstValue(*b.rep_, &cb);
  if (a_const && b_const) return ca <=> cb;
  if (a_const != b_const) return a_const ? std::strong_ordering::less : std::strong_ordering::greater;
  const auto& x = a.rep_->terms;
  const auto& y = b.rep_->terms;
  if (x.size() != y.size()) return x.size() <=> y.size();
  for (size_t i = 0; i < x.size(); ++i) {
    int c = CompareMonomials(x[i].mono, y[i].mono);
    if (c != 0) return c <=> 0;
    if (auto o = x[i].coeff <=> y[i].coeff; o != 0) return o;
  }
  return std::strong_ordering::equal;
}

SymExpr NumElements(const Shape& shape) {
  SymExpr n(1);
  for (const SymExpr& d : shape) n = n * d;
  return n;
}

std::string ShapeToString(const Shape& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += shape[i].ToString();
  }
  return s + "]";
}

}  // namespace memopt
