// Shape and value rules in the op registry. Each rule file registers its ops through one
// Register*Rules function (called from ops/legacy/shape_rules.cc until its family moves to lib/ops).
//
// A rule entry has two parts that the driver runs in order:
//   shape:  dtypes and shapes of the outputs (may read known input values, e.g. Reshape);
//   values: element values of small integer outputs (value propagation, rules_shape_values.cc).
#pragma once

#include <string>
#include <string_view>

#include "ir/op_registry.h"
#include "shape/infer_context.h"
#include "util/status.h"

namespace memopt::shape {

using RuleFn = ShapeRuleFn;

/// How a rule file registers its rules: a writer into the op registry (ir/op_registry.h), which
/// keeps one definition per op for every layer.
class RuleRegistry {
 public:
  explicit RuleRegistry(OpRegistry& ops) : ops_(ops) {}
  /// Registers the shape rule of `domain::op` ("" is the default ONNX domain).
  void Add(std::string_view domain, std::string_view op, RuleFn shape) { ops_.SetShape(domain, op, shape); }
  /// Registers the value-propagation rule of `domain::op`.
  void AddValues(std::string_view domain, std::string_view op, RuleFn values) { ops_.SetValues(domain, op, values); }

 private:
  OpRegistry& ops_;
};

/// The definition whose shape rule a node of `domain::op` runs (with the fallback between the
/// default domain and com.microsoft of op_key.h), or nullptr.
const OpDef* FindShapeRule(std::string_view domain, std::string_view op);

inline constexpr std::string_view kMsDomain = kMicrosoftDomain;

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
