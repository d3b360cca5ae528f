#include "shape/dim_expr.h"

#include <cctype>
#include <string>
#include <vector>

#include "shape/infer_context.h"

namespace memopt::shape {

namespace {

/// Recursive-descent parser over sympy's printing of integer polynomials and a few functions.
class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  std::optional<SymExpr> ParseAll() {
    auto e = Expr();
    SkipSpaces();
    if (!e.has_value() || pos_ != text_.size()) return std::nullopt;
    return e;
  }

 private:
  std::optional<SymExpr> Expr() {
    auto lhs = Term();
    while (lhs.has_value()) {
      SkipSpaces();
      if (Accept('+')) {
        auto rhs = Term();
        if (!rhs) return std::nullopt;
        lhs = *lhs + *rhs;
      } else if (Accept('-')) {
        auto rhs = Term();
        if (!rhs) return std::nullopt;
        lhs = *lhs - *rhs;
      } else {
        break;
      }
    }
    return lhs;
  }

  std::optional<SymExpr> Term() {
    auto lhs = Power();
    while (lhs.has_value()) {
      SkipSpaces();
      if (Peek("**")) break;
      if (Accept('*')) {
        auto rhs = Power();
        if (!rhs) return std::nullopt;
        lhs = *lhs * *rhs;
      } else if (Accept('/')) {
        const bool floor_div = Accept('/');
        auto rhs = Power();
        if (!rhs) return std::nullopt;
        if (floor_div || div_mode_ == DivMode::kFloor) {
          lhs = SymExpr::FloorDiv(*lhs, *rhs);
        } else if (div_mode_ == DivMode::kCeil) {
          lhs = SymExpr::CeilDiv(*lhs, *rhs);
        } else {
          lhs = IntegerQuotient(*lhs, *rhs);
          if (!lhs) return std::nullopt;
        }
      } else {
        break;
      }
    }
    return lhs;
  }

  std::optional<SymExpr> Power() {
    auto base = Unary();
    SkipSpaces();
    if (!base.has_value() || !Peek("**")) return base;
    pos_ += 2;
    SkipSpaces();
    const size_t start = pos_;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) ++pos_;
    if (start == pos_ || pos_ - start > 2) return std::nullopt;
    const int exp = std::stoi(std::string(text_.substr(start, pos_ - start)));
    SymExpr result(1);
    for (int i = 0; i < exp; ++i) result = result * *base;
    return result;
  }

  std::optional<SymExpr> Unary() {
    SkipSpaces();
    if (Accept('-')) {
      auto e = Unary();
      if (!e) return std::nullopt;
      return -*e;
    }
    return Primary();
  }

  std::optional<SymExpr> Primary() {
    SkipSpaces();
    if (pos_ >= text_.size()) return std::nullopt;
    const char c = text_[pos_];
    if (c == '(') {
      ++pos_;
      auto e = Expr();
      SkipSpaces();
      if (!e || !Accept(')')) return std::nullopt;
      return e;
    }
    if (std::isdigit(static_cast<unsigned char>(c))) {
      const size_t start = pos_;
      while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) ++pos_;
      if (pos_ - start > 17) return std::nullopt;
      return SymExpr(static_cast<int64_t>(std::stoll(std::string(text_.substr(start, pos_ - start)))));
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      const size_t start = pos_;
      while (pos_ < text_.size() &&
             (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_' || text_[pos_] == '.')) {
        ++pos_;
      }
      const std::string name(text_.substr(start, pos_ - start));
      SkipSpaces();
      if (!Accept('(')) return SymExpr::Symbol(name);
      // Inside floor(...) / ceiling(...) a division rounds instead of having to be exact.
      const DivMode saved = div_mode_;
      if (name == "floor") div_mode_ = DivMode::kFloor;
      if (name == "ceiling") div_mode_ = DivMode::kCeil;
      std::vector<SymExpr> args;
      do {
        auto a = Expr();
        if (!a) return std::nullopt;
        args.push_back(*a);
        SkipSpaces();
      } while (Accept(','));
      div_mode_ = saved;
      if (!Accept(')')) return std::nullopt;
      return Call(name, args);
    }
    return std::nullopt;
  }

  static std::optional<SymExpr> Call(const std::string& name, const std::vector<SymExpr>& args) {
    // The rounding happened in the division inside (or the value was integral already).
    if (args.size() == 1 && (name == "floor" || name == "ceiling")) return args[0];
    if (args.size() != 2) return std::nullopt;
    if (name == "Max") return SymExpr::Max(args[0], args[1]);
    if (name == "Min") return SymExpr::Min(args[0], args[1]);
    if (name == "Mod") return SymExpr::Mod(args[0], args[1]);
    return std::nullopt;
  }

  void SkipSpaces() {
    while (pos_ < text_.size() && text_[pos_] == ' ') ++pos_;
  }
  bool Accept(char c) {
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool Peek(std::string_view s) const { return text_.substr(pos_, s.size()) == s; }

  enum class DivMode { kExact, kFloor, kCeil };

  std::string_view text_;
  size_t pos_ = 0;
  DivMode div_mode_ = DivMode::kExact;
};

}  // namespace

std::optional<SymExpr> ParseDimExpression(std::string_view text) {
  const bool looks_like_expression = text.find_first_of("*+/(") != std::string_view::npos ||
                                     text.find(" - ") != std::string_view::npos;
  if (!looks_like_expression) return std::nullopt;
  return Parser(text).ParseAll();
}

SymExpr NormalizeDeclaredDim(const SymExpr& dim) {
  if (dim.IsConstant()) return dim;
  const std::vector<std::string> syms = dim.Symbols();
  if (syms.size() != 1 || !(dim == SymExpr::Symbol(syms[0]))) return dim;
  auto parsed = ParseDimExpression(syms[0]);
  return parsed.has_value() ? *parsed : dim;
}

}  // namespace memopt::shape
