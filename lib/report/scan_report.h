// Renders a ScanResult for people (ORT-style plan table, peak summary, node-level details) and
// for machines (JSON with schema_version and raw integers; CSV/Markdown plan tables).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "analysis/scan.h"
#include "report/table.h"
#include "shape/shape_infer.h"

namespace memopt {

struct ScanReportInput {
  std::string model_name;  ///< as shown (the path the user gave)
  const Graph* graph = nullptr;
  const ScanResult* result = nullptr;
  const ScanOptions* options = nullptr;
  const ShapeInferenceStats* shape_stats = nullptr;
  bool details = false;
};

/// Table/CSV/Markdown text for stdout.
std::string RenderScanText(const ScanReportInput& in, OutputFormat format);
/// The JSON report (schema documented in docs/json_schema.md).
nlohmann::json ScanToJson(const ScanReportInput& in);
/// The "Configs Freq Max Saving(Bytes) Saving Symbolic(Bytes)" table.
TextTable PlanTable(const ScanReportInput& in);

}  // namespace memopt
