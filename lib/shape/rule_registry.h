// Shape and value rules in the op registry. The rule files live with their ops in
// lib/ops/<family>/ and register through a RuleRegistry over the op registry.
//
// A rule entry has two parts that the driver runs in order:
//   shape:  dtypes and shapes of the outputs (may read known input values, e.g. Reshape);
//   values: element values of small integer outputs (value propagation, e.g. ops/layout/shape_values.cc).
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

}  // namespace memopt::shape
