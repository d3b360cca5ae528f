// Shared pieces of the memopt command line: the subcommand table, exit codes, error printing,
// progress, and the load -> infer -> scan stage (pipeline/load_and_scan.h) with both on stderr.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "pipeline/load_and_scan.h"
#include "util/status.h"

namespace memopt::cli {

/// Documented exit codes (README, `memopt --help`).
enum ExitCode : int {
  kExitOk = 0,
  kExitError = 1,
  kExitUsage = 2,
  kExitGate = 3,
  kExitNoGpu = 4,
  kExitVerify = 5,
  kExitInterrupted = 130,
};

/// Options shared by every subcommand.
struct GlobalOptions {
  int verbosity = 0;  ///< -v counted up, -q counted down
  bool no_color = false;
};

/// One row of the subcommand table: the single source of truth for names, help and dispatch.
struct Subcommand {
  const char* name;
  const char* summary;
  /// Adds the subcommand's options to `app`; returns the function that runs it.
  std::function<std::function<int()>(CLI::App& app, const GlobalOptions& globals)> setup;
};

const std::vector<Subcommand>& Subcommands();

/// Terminal behaviour, decided once by main after the options are parsed: verbosity, colour.
void ConfigureTerminal(const GlobalOptions& globals);
/// Colour rule: never with --no-color or NO_COLOR (any value); else forced on by CLICOLOR_FORCE or
/// FORCE_COLOR (set and not "0"); else only when stderr is a TTY and TERM is not "dumb".
/// Arguments are the environment values (nullptr = unset).
bool ShouldUseColor(bool no_color_flag, bool stderr_is_tty, const char* term, const char* no_color,
                    const char* clicolor_force, const char* force_color);
/// "memopt: <message>" on stderr when the verbosity is at least `level` (1: -v, 2: -vv, 3: -vvv).
void PrintInfo(int level, const std::string& message);

/// Progress of a long stage on stderr (loading, gradient building, benchmarking). On a TTY at
/// verbosity >= 0: one overprinted line ("memopt: loading model.onnx ... 42%"), erased when the
/// object is destroyed, redrawn at most every 100 ms. Elsewhere silent, except that -v prints each
/// finished stage with its time ("memopt: inferring shapes: 812 ms").
class Progress {
 public:
  explicit Progress(std::string first_stage);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  /// Finishes the current stage and starts the next one.
  void Stage(std::string text);
  /// `done` of `total` units of the current stage (drawn as a percentage).
  void Update(int64_t done, int64_t total);

 private:
  void Draw(const std::string& suffix, bool force);
  void FinishStage();
  std::string stage_;
  bool live_ = false;  ///< drawing on a TTY
  std::chrono::steady_clock::time_point stage_start_, last_draw_;
  size_t drawn_width_ = 0;
};

/// --threads N for the commands that run a graph on the CPU (0, the default: MEMOPT_NUM_THREADS,
/// else the machine's cores). ApplyThreads sets it for the kernels and BLAS before a run.
void AddThreadsOption(CLI::App& app, int& threads);
void ApplyThreads(int threads);

int ExitCodeFor(const Status& status);
/// Prints "memopt: error: <message>" to stderr and returns the exit code for it.
int ReportError(const Status& status);
/// `even_if_quiet`: also under -qq (what a CI gate must never pass in silence).
void PrintWarning(const std::string& message, bool even_if_quiet = false);
void PrintHint(const std::string& message);

/// memopt::LoadAndInfer (pipeline/load_and_scan.h) with the progress line on stderr, then the
/// loader's warnings.
Expected<LoadedModel> LoadAndInfer(const std::string& path);
/// memopt::LoadAndScan the same way.
Expected<std::unique_ptr<ScannedModel>> LoadAndScan(const ScanRequest& request);
/// Adds --ops (default ort) and --op-table to a subcommand; `what` ends the --op-table help.
void AddOpTableOptions(CLI::App& app, std::string& ops, std::string& op_table, const std::string& what);

/// Writes `content` to `-o` (io::TempFileSink: atomically for files, through symlinks, directly to
/// FIFOs and devices) or to stdout when `output` is empty or "-".
Status WriteOutput(const std::string& output, const std::string& content, const std::string& input_model);

/// The human report of a subcommand whose `-o` names its main output: on stdout, or on stderr
/// when that output took stdout (`-o -`), so that stdout carries the output alone.
void PrintReport(const std::string& text, bool stdout_taken);

/// Flushes and closes stdout, reporting a write error (`memopt scan m.onnx > /dev/full`) as an
/// error status instead of a silent success.
Status CloseStdout();

class Stopwatch {
 public:
  Stopwatch() : start_(std::chrono::steady_clock::now()) {}
  double ElapsedMs() const {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  std::chrono::steady_clock::time_point start_;
};

}  // namespace memopt::cli
