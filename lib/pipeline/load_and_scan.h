// The stage every analysing subcommand starts with: load a model, infer its shapes, bind --dims,
// pick the recomputable-op table and scan (analysis/scan.h). The CLI's scan, plan and apply run it
// through LoadAndScan; grad, run and bench use its first half (LoadAndInfer, ParseDimsForModel).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "analysis/op_table.h"
#include "analysis/scan.h"
#include "io/model_loader.h"
#include "shape/shape_infer.h"
#include "util/status.h"

namespace memopt {

/// Told the name of each stage as it starts ("loading m.onnx", "inferring shapes (812 nodes)"),
/// e.g. to draw progress; may be empty.
using StageCallback = std::function<void(const std::string& stage)>;

/// A model loaded and shape-inferred, with the time each stage took. The loader's warnings are in
/// model.warnings, for the caller to print.
struct LoadedModel {
  Model model;
  ShapeInferenceStats shape_stats;
  std::vector<TensorInfo> declared;  ///< value infos as loaded, before inference (for the --dims check)
  double load_ms = 0;
  double infer_ms = 0;
};

Expected<LoadedModel> LoadAndInfer(const std::string& path, const StageCallback& on_stage = {});

/// Dim names used by the model's shapes (sorted; the unk__ placeholders only with `with_unnamed`).
std::vector<std::string> ModelDims(const Graph& graph, bool with_unnamed = false);
/// True for the names the loader and shape inference give unnamed or unresolved dims (unk__<n>).
bool IsUnnamedDim(const std::string& name);
/// Parses --dims and checks every name against the model, with a did-you-mean hint.
Expected<DimBindings> CheckDimNames(const std::string& text, const Graph& graph);
/// The same, and checks that every size the dims determine fits 64 bits (CheckSizesAtDims).
Expected<DimBindings> ParseDimsForModel(const std::string& text, const Graph& graph);
/// The same, and checks that the values do not contradict the model's shapes (CheckDimBindings).
Expected<DimBindings> ParseDimsForModel(const std::string& text, const LoadedModel& loaded);
/// "batch=<value>,seq_len=<value>": the --dims a user must add to bind `unbound` dims. Dims the
/// exporter named by a traced size ("8") are explained, with where they are when `graph` is given.
std::string DimsExample(const std::vector<std::string>& unbound, const Graph* graph = nullptr);

/// --ops ort|extended and --op-table FILE: ONNX Runtime's recomputable-op table, or with memopt's
/// extended ops (OpTable::Extended), with FILE's ops merged in; nullopt for the plain built-in
/// table. An unknown `ops` value is a usage error; file errors name the file.
Expected<std::optional<OpTable>> LoadOpTableOption(const std::string& ops, const std::string& path);

/// What LoadAndScan loads and how it scans (the subcommands' MODEL, --dims, --ops, --op-table,
/// --level and --boundary).
struct ScanRequest {
  std::string model;
  std::string dims;
  std::string ops = "ort";
  std::string op_table;
  int level = 1;
  std::string boundary;
  /// Also the per-block checkpoint plans (plan/layer_checkpoint.h, WithCheckpointPlans): memopt's
  /// model for budget plans, and apply of a config that names them.
  bool checkpoint_plans = false;
};

/// A scanned model. Held behind a pointer: `options.op_table` points into it.
struct ScannedModel {
  std::string name;  ///< the model as the user named it (ScanRequest::model), for messages
  LoadedModel loaded;
  DimBindings dims;
  std::optional<OpTable> op_table;
  ScanOptions options;
  ScanResult scan;
  double scan_ms = 0;

  const Graph& graph() const { return loaded.model.graph; }
};

/// Loads, infers, binds the dims, loads the op table and scans; errors name the model or option.
Expected<std::unique_ptr<ScannedModel>> LoadAndScan(const ScanRequest& request, const StageCallback& on_stage = {});

}  // namespace memopt
