// OpKey: the one key every op table uses, (domain, op type) with the domain normalised once.
//
// ONNX writes the default domain as "" or "ai.onnx"; both become "". ONNX Runtime registers some
// contrib ops in the default domain and some standard ops again as com.microsoft ops, so a lookup
// that misses in one of {"", "com.microsoft"} tries the other (OpRegistry::Find*).
#pragma once

#include <compare>
#include <optional>
#include <string>
#include <string_view>

namespace memopt {

struct Node;

inline constexpr std::string_view kOnnxDomain = "";
inline constexpr std::string_view kMicrosoftDomain = "com.microsoft";
/// memopt's own ops (the recurrent gradients, ops/recurrent): written by `grad`, run by memopt.
inline constexpr std::string_view kMemoptDomain = "ai.memopt";

/// "" for "ai.onnx" and "", the domain itself otherwise.
std::string_view NormalizeDomain(std::string_view domain);

/// The domain a lookup falls back to: com.microsoft for the default domain and back; none else.
std::optional<std::string_view> FallbackDomain(std::string_view domain);

/// The one lookup rule of every op table: `find(domain)` with the normalised domain, then, when it
/// finds nothing (a null or false result), with the fallback domain.
template <class Find>
auto FindWithFallback(std::string_view domain, Find find) -> decltype(find(domain)) {
  if (auto found = find(NormalizeDomain(domain))) return found;
  if (auto other = FallbackDomain(domain)) return find(*other);
  return {};
}

struct OpKey {
  std::string domain;  ///< normalised ("" is ai.onnx)
  std::string op;

  OpKey() = default;
  OpKey(std::string_view domain_in, std::string_view op_in) : domain(NormalizeDomain(domain_in)), op(op_in) {}
  static OpKey Of(const Node& node);

  /// "op" in the default domain, "domain::op" otherwise.
  std::string ToString() const;
  auto operator<=>(const OpKey&) const = default;
};

}  // namespace memopt
