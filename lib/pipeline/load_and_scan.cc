#include "pipeline/load_and_scan.h"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <set>
#include <sstream>

#include "plan/layer_checkpoint.h"
#include "shape/dims_check.h"
#include "util/closest_match.h"

namespace memopt {

namespace {

double MsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

Expected<LoadedModel> LoadAndInfer(const std::string& path, const StageCallback& on_stage) {
  LoadedModel out;
  if (on_stage) on_stage("loading " + path);
  auto start = std::chrono::steady_clock::now();
  auto model = LoadModel(path);
  if (!model.ok()) return model.status().WithContext(path);
  out.load_ms = MsSince(start);
  out.model = std::move(model).value();
  if (on_stage) on_stage("inferring shapes (" + std::to_string(out.model.graph.nodes.size()) + " nodes)");
  start = std::chrono::steady_clock::now();
  out.declared = DeclaredInfos(out.model.graph);
  auto stats = InferShapes(out.model.graph);
  if (!stats.ok()) return stats.status().WithContext(path);
  out.shape_stats = std::move(stats).value();
  out.infer_ms = MsSince(start);
  return out;
}

std::vector<std::string> ModelDims(const Graph& graph, bool with_unnamed) {
  std::set<std::string> names;
  for (const Value& v : graph.values) {
    if (!v.info.shape) continue;
    for (const SymExpr& d : *v.info.shape) {
      if (d.IsConstant()) continue;
      for (const std::string& s : d.Symbols()) {
        if (with_unnamed || !IsUnnamedDim(s)) names.insert(s);
      }
    }
  }
  return {names.begin(), names.end()};
}

bool IsUnnamedDim(const std::string& name) { return name.rfind("unk__", 0) == 0; }

Expected<DimBindings> ParseDimsForModel(const std::string& text, const Graph& graph) {
  MEMOPT_ASSIGN_OR_RETURN(DimBindings dims, CheckDimNames(text, graph));
  MEMOPT_RETURN_IF_ERROR(CheckSizesAtDims(graph, dims));
  return dims;
}

Expected<DimBindings> CheckDimNames(const std::string& text, const Graph& graph) {
  MEMOPT_ASSIGN_OR_RETURN(DimBindings dims, DimBindings::Parse(text));
  if (dims.empty()) return dims;
  // Dims shape inference could not resolve (unk__<n>) bind like the model's own: the hints name them.
  const std::vector<std::string> all = ModelDims(graph, true);
  const std::set<std::string> known_set(all.begin(), all.end());
  std::vector<std::string> known = ModelDims(graph);
  for (const auto& [name, value] : dims.values()) {
    if (known_set.count(name)) continue;
    std::string message = "unknown dim '" + name + "' in --dims";
    std::string guess = ClosestMatch(name, known);
    if (!guess.empty()) message += "; did you mean '" + guess + "'?";
    if (known.empty()) {
      message += " (the model has no symbolic dims)";
    } else {
      message += " (model dims:";
      for (size_t i = 0; i < known.size(); ++i) message += (i ? ", " : " ") + known[i];
      message += ")";
    }
    return UsageError(message);
  }
  return dims;
}

Expected<DimBindings> ParseDimsForModel(const std::string& text, const LoadedModel& loaded) {
  MEMOPT_ASSIGN_OR_RETURN(DimBindings dims, CheckDimNames(text, loaded.model.graph));
  MEMOPT_RETURN_IF_ERROR(CheckDimBindings(loaded.model.graph, loaded.declared, dims));
  MEMOPT_RETURN_IF_ERROR(CheckSizesAtDims(loaded.model.graph, dims));
  return dims;
}

Expected<std::optional<OpTable>> LoadOpTableOption(const std::string& ops, const std::string& path) {
  if (ops != "ort" && ops != "extended") return UsageError("unknown --ops '" + ops + "'; use ort or extended");
  const OpTable& base = ops == "extended" ? OpTable::Extended() : OpTable::Builtin();
  if (path.empty()) return ops == "ort" ? std::optional<OpTable>() : std::optional<OpTable>(base);
  std::ifstream in(path, std::ios::binary);
  if (!in) return InvalidInput(path + ": cannot open op table file");
  std::stringstream text;
  text << in.rdbuf();
  auto extra = OpTable::Parse(text.str());
  if (!extra.ok()) return extra.status().WithContext(path);
  OpTable table = base;
  Status merged = table.Merge(*extra);
  if (!merged.ok()) return merged.WithContext(path);
  return std::optional<OpTable>(std::move(table));
}

namespace {

bool IsNumeric(const std::string& name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; });
}

/// "'8' is dim 1 of input 'input_ids'", from the first graph input that has the dim.
std::string WhereDimIs(const std::string& name, const Graph& graph) {
  for (ValueId v : graph.inputs) {
    const auto& shape = graph.value(v).info.shape;
    if (!shape.has_value()) continue;
    for (size_t axis = 0; axis < shape->size(); ++axis) {
      if ((*shape)[axis].ToString() == "'" + name + "'") {  // a numeric dim name prints quoted
        return "'" + name + "' is dim " + std::to_string(axis) + " of input '" + graph.value(v).name + "'";
      }
    }
  }
  return "'" + name + "'";
}

}  // namespace

std::string DimsExample(const std::vector<std::string>& unbound, const Graph* graph) {
  std::string out;
  bool unnamed = false;
  std::vector<std::string> numeric;
  for (size_t i = 0; i < unbound.size(); ++i) {
    out += (i ? "," : "") + unbound[i] + "=<value>";
    unnamed = unnamed || IsUnnamedDim(unbound[i]);
    if (IsNumeric(unbound[i])) numeric.push_back(graph != nullptr ? WhereDimIs(unbound[i], *graph) : "'" + unbound[i] + "'");
  }
  if (unnamed) out += " (unk__ dims are sizes shape inference could not resolve; --details shows where)";
  bool data_dependent = false;
  for (const std::string& name : unbound) data_dependent = data_dependent || name.rfind("nonzero__", 0) == 0;
  if (data_dependent) {
    out += " (nonzero__ dims count the elements a NonZero finds, which only the data decides (e.g. the tokens "
           "a router sends to one expert): bind them to your run's counts, or to their largest value for a "
           "bound; --details shows which node)";
  }
  if (!numeric.empty()) {
    std::string list;
    for (size_t i = 0; i < numeric.size(); ++i) list += (i ? ", " : "") + numeric[i];
    out += " (the exporter named dims by the sizes it traced with, not by what they are: " + list +
           "; bind each to the size of your run)";
  }
  return out;
}

Expected<std::unique_ptr<ScannedModel>> LoadAndScan(const ScanRequest& request, const StageCallback& on_stage) {
  auto out = std::make_unique<ScannedModel>();
  out->name = request.model;
  MEMOPT_ASSIGN_OR_RETURN(out->loaded, LoadAndInfer(request.model, on_stage));
  MEMOPT_ASSIGN_OR_RETURN(out->dims, ParseDimsForModel(request.dims, out->loaded));
  MEMOPT_ASSIGN_OR_RETURN(out->op_table, LoadOpTableOption(request.ops, request.op_table));
  out->options.level = request.level;
  out->options.boundary_node = request.boundary;
  out->options.dims = out->dims;
  out->options.op_table = out->op_table ? &*out->op_table : nullptr;
  if (on_stage) on_stage("scanning");
  const auto start = std::chrono::steady_clock::now();
  auto scan = Scan(out->graph(), out->options);
  if (!scan.ok()) return scan.status().WithContext(request.model);
  out->scan = std::move(scan).value();
  if (request.checkpoint_plans) out->scan = WithCheckpointPlans(out->graph(), out->scan);
  out->scan_ms = MsSince(start);
  return out;
}

}  // namespace memopt
