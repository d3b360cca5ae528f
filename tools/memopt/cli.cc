#include "cli.h"

#include <cstdio>
#include <iostream>
#include <set>

#include "io/atomic_write.h"

namespace memopt::cli {

int ExitCodeFor(const Status& status) {
  switch (status.code()) {
    case ErrorCode::kOk: return kExitOk;
    case ErrorCode::kUsage: return kExitUsage;
    case ErrorCode::kBudgetNotMet: return kExitGate;
    case ErrorCode::kNoDevice: return kExitNoGpu;
    case ErrorCode::kVerifyFailed: return kExitVerify;
    default: return kExitError;
  }
}

int ReportError(const Status& status) {
  std::string message = status.message();
  // One line: later lines of a multi-line message are joined.
  for (char& c : message) {
    if (c == '\n') c = ' ';
  }
  std::fprintf(stderr, "memopt: error: %s\n", message.c_str());
  return ExitCodeFor(status);
}

void PrintWarning(const std::string& message) { std::fprintf(stderr, "memopt: warning: %s\n", message.c_str()); }
void PrintHint(const std::string& message) { std::fprintf(stderr, "memopt: hint: %s\n", message.c_str()); }

Expected<LoadedModel> LoadAndInfer(const std::string& path) {
  LoadedModel out;
  Stopwatch load_watch;
  auto model = LoadModel(path);
  if (!model.ok()) return model.status().WithContext(path);
  out.load_ms = load_watch.ElapsedMs();
  out.model = std::move(model).value();
  Stopwatch infer_watch;
  auto stats = InferShapes(out.model.graph);
  if (!stats.ok()) return stats.status().WithContext(path);
  out.shape_stats = std::move(stats).value();
  out.infer_ms = infer_watch.ElapsedMs();
  return out;
}

std::vector<std::string> ModelDims(const Graph& graph) {
  std::set<std::string> names;
  for (const Value& v : graph.values) {
    if (!v.info.shape) continue;
    for (const SymExpr& d : *v.info.shape) {
      if (d.IsConstant()) continue;
      for (const std::string& s : d.Symbols()) {
        if (s.rfind("unk__", 0) != 0) names.insert(s);
      }
    }
  }
  return {names.begin(), names.end()};
}

Expected<DimBindings> ParseDimsForModel(const std::string& text, const Graph& graph) {
  MEMOPT_ASSIGN_OR_RETURN(DimBindings dims, DimBindings::Parse(text));
  if (dims.empty()) return dims;
  std::vector<std::string> known = ModelDims(graph);
  std::set<std::string> known_set(known.begin(), known.end());
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

Status WriteOutput(const std::string& output, const std::string& content, const std::string& input_model) {
  if (output.empty() || output == "-") {
    std::fwrite(content.data(), 1, content.size(), stdout);
    std::fflush(stdout);
    return Status::Ok();
  }
  return WriteFileAtomically(output, content, input_model);
}

}  // namespace memopt::cli
