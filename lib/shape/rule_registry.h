// The table of shape rules, keyed by (domain, op type). Each rule file registers its ops through
// one Register*Rules function; BuiltinRules() builds the table once.
//
// A rule entry has two parts that the driver runs in order:
//   shape:  dtypes and shapes of the outputs (may read known input values, e.g. Reshape);
//   values: element values of small integer outputs (value propagation, rules_shape_values.cc).
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>

#include "shape/infer_context.h"
#include "util/status.h"

namespace memopt::shape {

using RuleFn = Status (*)(InferContext&);

struct OpRule {
  RuleFn shape = nullptr;
  RuleFn values = nullptr;
};

class RuleRegistry {
 public:
  /// Registers the shape rule of `domain::op` ("" is the default ONNX domain).
  void Add(std::string_view domain, std::string_view op, RuleFn shape);
  /// Registers the value-propagation rule of `domain::op`.
  void AddValues(std::string_view domain, std::string_view op, RuleFn values);
  /// The rule for a node. ORT registers some contrib ops in the default domain and some standard
  /// ops also exist as com.microsoft ops, so a miss in one of {"", "com.microsoft"} falls back to
  /// the other.
  const OpRule* Find(std::string_view domain, std::string_view op) const;

 private:
  std::unordered_map<std::string, OpRule> rules_;
};

/// All built-in rules.
const RuleRegistry& BuiltinRules();

inline constexpr std::string_view kMsDomain = "com.microsoft";

// One per rule file.
void RegisterElementwiseRules(RuleRegistry& r);
void RegisterTensorRules(RuleRegistry& r);
void RegisterIndexRules(RuleRegistry& r);
void RegisterGeneratorRules(RuleRegistry& r);
void RegisterReduceRules(RuleRegistry& r);
void RegisterMatMulRules(RuleRegistry& r);
void RegisterNnRules(RuleRegistry& r);
void RegisterTrainingRules(RuleRegistry& r);
void RegisterGradRules(RuleRegistry& r);
void RegisterValueRules(RuleRegistry& r);
void RegisterLayoutValueRules(RuleRegistry& r);

}  // namespace memopt::shape
