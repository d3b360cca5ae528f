#include "ir/op_key.h"

#include "ir/graph.h"

namespace memopt {

std::string_view NormalizeDomain(std::string_view domain) { return domain == "ai.onnx" ? kOnnxDomain : domain; }

std::optional<std::string_view> FallbackDomain(std::string_view domain) {
  domain = NormalizeDomain(domain);
  if (domain == kOnnxDomain) return kMicrosoftDomain;
  if (domain == kMicrosoftDomain) return kOnnxDomain;
  return std::nullopt;
}

OpKey OpKey::Of(const Node& node) { return OpKey(node.domain, node.op_type); }

std::string OpKey::ToString() const { return domain.empty() ? op : domain + "::" + op; }

}  // namespace memopt
