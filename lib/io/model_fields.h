// What the wire-level model writers (rewrite/model_writer, grad/training_model_writer) change in
// the ModelProto around the graph: ModelProto.functions is dropped once the loader inlined them
// (io/function_inliner.h), and opset imports the graph needs but the file lacks are appended
// (the inlined functions' domains, com.microsoft for training ops).
#pragma once

#include <cstdint>
#include <set>
#include <string>

#include "io/model_loader.h"
#include "io/wire_reader.h"

namespace memopt::io {

/// ModelProto field numbers the writers look at.
constexpr uint32_t kModelGraphField = 7, kModelOpsetImportField = 8, kModelFunctionsField = 25;

/// False for a top-level field that the written model must not carry over from `model`'s file.
bool KeepModelField(const Model& model, const wire::Field& field);

/// Collects the domains of the file's opset imports, then writes those the graph adds.
class OpsetImports {
 public:
  /// Records `field` when it is an opset_import.
  void See(const wire::Field& field);
  /// opset_import fields (tag, length, OperatorSetIdProto) for the graph's domains not seen.
  std::string MissingFields(const Graph& graph) const;

 private:
  std::set<std::string> domains_;
};

}  // namespace memopt::io
