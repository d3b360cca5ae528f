#include "cli.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <sstream>
#include <fstream>
#include <set>

#include "exec/kernels/kernel_util.h"
#include "io/atomic_write.h"
#include "shape/dims_check.h"
#include "util/closest_match.h"

namespace memopt::cli {

namespace {

GlobalOptions g_globals;
bool g_color = false;

const char* Red() { return g_color ? "\033[1;31m" : ""; }
const char* Yellow() { return g_color ? "\033[1;33m" : ""; }
const char* Cyan() { return g_color ? "\033[1;36m" : ""; }
const char* Reset() { return g_color ? "\033[0m" : ""; }

bool IsSetNotZero(const char* value) { return value != nullptr && value[0] != '\0' && std::strcmp(value, "0") != 0; }

}  // namespace

void ConfigureTerminal(const GlobalOptions& globals) {
  g_globals = globals;
  g_color = ShouldUseColor(globals.no_color, isatty(STDERR_FILENO) != 0, std::getenv("TERM"),
                           std::getenv("NO_COLOR"), std::getenv("CLICOLOR_FORCE"), std::getenv("FORCE_COLOR"));
}

bool ShouldUseColor(bool no_color_flag, bool stderr_is_tty, const char* term, const char* no_color,
                    const char* clicolor_force, const char* force_color) {
  if (no_color_flag || no_color != nullptr) return false;
  if (IsSetNotZero(clicolor_force) || IsSetNotZero(force_color)) return true;
  return stderr_is_tty && !(term != nullptr && std::strcmp(term, "dumb") == 0);
}

void PrintInfo(int level, const std::string& message) {
  if (g_globals.verbosity < level) return;
  std::fprintf(stderr, "memopt: %s\n", message.c_str());
}

Progress::Progress(std::string first_stage) : stage_(std::move(first_stage)) {
  live_ = g_globals.verbosity >= 0 && isatty(STDERR_FILENO) != 0;
  const char* term = std::getenv("TERM");
  if (term != nullptr && std::strcmp(term, "dumb") == 0) live_ = false;
  stage_start_ = std::chrono::steady_clock::now();
  Draw("", true);
}

Progress::~Progress() {
  FinishStage();
  if (live_ && drawn_width_ > 0) {
    std::fprintf(stderr, "\r%*s\r", static_cast<int>(drawn_width_), "");
    std::fflush(stderr);
  }
}

void Progress::Stage(std::string text) {
  FinishStage();
  stage_ = std::move(text);
  stage_start_ = std::chrono::steady_clock::now();
  Draw("", true);
}

void Progress::Update(int64_t done, int64_t total) {
  if (!live_ || total <= 0) return;
  Draw(" " + std::to_string(static_cast<int>(100.0 * static_cast<double>(done) / static_cast<double>(total))) + "%",
       false);
}

void Progress::Draw(const std::string& suffix, bool force) {
  if (!live_) return;
  const auto now = std::chrono::steady_clock::now();
  if (!force && now - last_draw_ < std::chrono::milliseconds(100)) return;
  last_draw_ = now;
  std::string line = "memopt: " + stage_ + " ..." + suffix;
  if (line.size() > 100) line = line.substr(0, 97) + "...";
  const size_t pad = drawn_width_ > line.size() ? drawn_width_ - line.size() : 0;
  std::fprintf(stderr, "\r%s%*s", line.c_str(), static_cast<int>(pad), "");
  std::fflush(stderr);
  drawn_width_ = line.size();
}

void Progress::FinishStage() {
  if (stage_.empty() || g_globals.verbosity < 1) return;
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - stage_start_).count();
  if (live_ && drawn_width_ > 0) {
    std::fprintf(stderr, "\r%*s\r", static_cast<int>(drawn_width_), "");
    drawn_width_ = 0;
  }
  std::fprintf(stderr, "memopt: %s: %.0f ms\n", stage_.c_str(), ms);
}

void AddThreadsOption(CLI::App& app, int& threads) {
  app.add_option("--threads", threads,
                 "CPU threads for the kernels and BLAS (default: MEMOPT_NUM_THREADS, else the machine's cores)")
      ->check(CLI::Range(1, 256));
}

void ApplyThreads(int threads) {
  if (threads > 0) SetNumThreads(threads);
}

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
  std::fprintf(stderr, "memopt: %serror:%s %s\n", Red(), Reset(), message.c_str());
  return ExitCodeFor(status);
}

void PrintWarning(const std::string& message, bool even_if_quiet) {
  if (g_globals.verbosity < -1 && !even_if_quiet) return;  // -qq
  std::fprintf(stderr, "memopt: %swarning:%s %s\n", Yellow(), Reset(), message.c_str());
}
void PrintHint(const std::string& message) {
  if (g_globals.verbosity < 0) return;  // -q
  std::fprintf(stderr, "memopt: %shint:%s %s\n", Cyan(), Reset(), message.c_str());
}

namespace {

Expected<LoadedModel> LoadAndInferWithProgress(const std::string& path) {
  LoadedModel out;
  Progress progress("loading " + path);
  Stopwatch load_watch;
  auto model = LoadModel(path);
  if (!model.ok()) return model.status().WithContext(path);
  out.load_ms = load_watch.ElapsedMs();
  out.model = std::move(model).value();
  progress.Stage("inferring shapes (" + std::to_string(out.model.graph.nodes.size()) + " nodes)");
  Stopwatch infer_watch;
  out.declared = DeclaredInfos(out.model.graph);
  auto stats = InferShapes(out.model.graph);
  if (!stats.ok()) return stats.status().WithContext(path);
  out.shape_stats = std::move(stats).value();
  out.infer_ms = infer_watch.ElapsedMs();
  return out;
}

}  // namespace

Expected<LoadedModel> LoadAndInfer(const std::string& path) {
  auto loaded = LoadAndInferWithProgress(path);  // the progress line is gone before the warnings
  if (loaded.ok()) {
    for (const std::string& w : loaded->model.warnings) PrintWarning(path + ": " + w);
  }
  return loaded;
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

std::string DimsExample(const std::vector<std::string>& unbound) {
  std::string out;
  bool unnamed = false;
  for (size_t i = 0; i < unbound.size(); ++i) {
    out += (i ? "," : "") + unbound[i] + "=<value>";
    unnamed = unnamed || IsUnnamedDim(unbound[i]);
  }
  if (unnamed) out += " (unk__ dims are sizes shape inference could not resolve; --details shows where)";
  return out;
}

void AddOpTableOptions(CLI::App& app, std::string& ops, std::string& op_table, const std::string& what) {
  app.add_option("--ops", ops,
                 "recomputable ops: ort (ONNX Runtime's table, default) or extended (plus memopt's deterministic "
                 "activation, elementwise, pooling, Conv and reduction ops; docs/plan.md)")
      ->default_val("ort");
  app.add_option("--op-table", op_table,
                 "JSON file of extra recomputable ops (format: configs/recompute_ops.json)" + what);
}

Status WriteOutput(const std::string& output, const std::string& content, const std::string& input_model) {
  if (output.empty() || output == "-") {
    std::fwrite(content.data(), 1, content.size(), stdout);
    if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
      return InvalidInput(std::string("cannot write to standard output: ") + std::strerror(errno));
    }
    return Status::Ok();
  }
  return WriteFileAtomically(output, content, input_model);
}

void PrintReport(const std::string& text, bool stdout_taken) {
  std::FILE* to = stdout_taken ? stderr : stdout;
  std::fwrite(text.data(), 1, text.size(), to);
  std::fflush(to);
}

Status CloseStdout() {
  std::cout.flush();
  const bool failed_before = std::ferror(stdout) != 0;
  int err = 0;
  errno = 0;
  if (std::fflush(stdout) != 0) err = errno != 0 ? errno : EIO;
  errno = 0;
  // A stdout closed by the caller (>&-) is no error when nothing was written to it.
  if (std::fclose(stdout) != 0 && err == 0 && errno != EBADF) err = errno != 0 ? errno : EIO;
  if (err == 0 && failed_before) err = EIO;
  if (err != 0) return InvalidInput(std::string("cannot write to standard output: ") + std::strerror(err));
  return Status::Ok();
}

}  // namespace memopt::cli
