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

/// A StageCallback that draws the stages on `progress`, created at the first one.
StageCallback DrawStages(std::optional<Progress>& progress) {
  return [&progress](const std::string& stage) {
    if (progress) {
      progress->Stage(stage);
    } else {
      progress.emplace(stage);
    }
  };
}

Expected<LoadedModel> LoadAndInferWithProgress(const std::string& path) {
  std::optional<Progress> progress;  // gone before the warnings
  return memopt::LoadAndInfer(path, DrawStages(progress));
}

}  // namespace

Expected<LoadedModel> LoadAndInfer(const std::string& path) {
  auto loaded = LoadAndInferWithProgress(path);  // the progress line is gone before the warnings
  if (loaded.ok()) {
    for (const std::string& w : loaded->model.warnings) PrintWarning(path + ": " + w);
  }
  return loaded;
}

Expected<std::unique_ptr<ScannedModel>> LoadAndScan(const ScanRequest& request) {
  Expected<std::unique_ptr<ScannedModel>> scanned = [&request] {
    std::optional<Progress> progress;  // gone before the warnings
    return memopt::LoadAndScan(request, DrawStages(progress));
  }();
  if (scanned.ok()) {
    for (const std::string& w : (*scanned)->loaded.model.warnings) PrintWarning(request.model + ": " + w);
  }
  return scanned;
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
