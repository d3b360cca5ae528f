// The pictures and views of `memopt scan` (docs/cli.md):
//   --timeline FILE.html|FILE.svg|-   memory timeline of one training step (lib/report/timeline_*)
//   --show CLUSTER[@N][:TYPE]         one candidate's subgraph, as text on stdout, or with
//     --dot FILE.dot|-                as Graphviz DOT, and/or
//     --extract FILE.onnx             as a small ONNX model for Netron
//   --activations                     the per-activation table (with --format)
// stdout carries one thing: the scan report, or the --activations / --show text instead of it;
// a view written to "-" takes stdout, and the report then goes to -o FILE only.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "analysis/scan.h"
#include "io/model_loader.h"
#include "report/table.h"
#include "util/status.h"

namespace memopt::cli {

struct ScanViewArgs {
  std::string timeline;
  std::string show;
  std::string dot;
  std::string extract;
  bool activations = false;

  bool any() const { return !timeline.empty() || !show.empty() || activations; }
};

void AddScanViewOptions(CLI::App& app, ScanViewArgs& args);

/// Usage checks before any work: the timeline file name, what goes to stdout.
Status ValidateScanViews(const ScanViewArgs& args, const std::string& output);

struct ScanViewContext {
  std::string model_path;
  const Model* model = nullptr;
  const ScanResult* scan = nullptr;
  const ScanOptions* options = nullptr;
  OutputFormat format = OutputFormat::kTable;
  std::string output;  ///< -o
};

/// Writes the requested views. Returns true when the scan report must not be written (a view
/// replaced it or took stdout), false when the caller writes the report as usual.
Expected<bool> RunScanViews(const ScanViewArgs& args, const ScanViewContext& context);

}  // namespace memopt::cli
