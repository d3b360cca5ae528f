// Test helpers for lib/shape tests: parse an ONNX text model, run inference, and print a
// value's inferred type and shape as "float16[batch, 512]".
#pragma once

#include <string>
#include <string_view>

#include <catch2/catch.hpp>

#include "io/model_loader.h"
#include "shape/shape_infer.h"

namespace memopt::testing {

struct Inferred {
  Model model;
  ShapeInferenceStats stats;
};

/// Loads `text` (ONNX text syntax) and infers shapes; REQUIREs both to succeed.
inline Inferred InferText(std::string_view text, ShapeInferenceOptions options = {}) {
  auto model = LoadModelFromText(text);
  INFO(model.status().message());
  REQUIRE(model.ok());
  auto stats = InferShapes(model->graph, options);
  INFO(stats.status().message());
  REQUIRE(stats.ok());
  return Inferred{std::move(model).value(), std::move(stats).value()};
}

/// "dtype[d0, d1]" of a value, "dtype[?]" when the rank is unknown, "<missing>" for no such value.
inline std::string TypeAndShape(const Graph& graph, const std::string& name) {
  const ValueId v = graph.FindValue(name);
  if (v == kNone) return "<missing>";
  const TensorInfo& info = graph.value(v).info;
  return DataTypeName(info.dtype) + (info.shape.has_value() ? ShapeToString(*info.shape) : std::string("[?]"));
}

/// The known values of a value as "[a, b]", or "none".
inline std::string ValuesOf(const Graph& graph, const std::string& name) {
  const ValueId v = graph.FindValue(name);
  if (v == kNone || !graph.value(v).known_values.has_value()) return "none";
  return ShapeToString(*graph.value(v).known_values);
}

inline bool HasDiagnosticContaining(const ShapeInferenceStats& stats, const std::string& text) {
  for (const auto& d : stats.diagnostics) {
    if (d.message.find(text) != std::string::npos) return true;
  }
  return false;
}

}  // namespace memopt::testing
