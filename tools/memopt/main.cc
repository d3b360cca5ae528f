// memopt: cut the peak memory of ONNX training graphs by recomputing activations.
#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include <sys/resource.h>
#include <unistd.h>

#include "cli.h"
#include "io/temp_file.h"
#include "sym/sym_expr.h"
#include "version_info.h"
#include "util/closest_match.h"

namespace {

constexpr const char* kExitCodeHelp =
    "Exit codes: 0 ok, 1 error (bad model, config or data), 2 usage, 3 budget/gate not met,\n"
    "            4 no GPU, 5 verification failed, 130 interrupted.\n"
    "Environment: NO_COLOR disables colour; CLICOLOR_FORCE/FORCE_COLOR force it on stderr.";

/// "unknown command 'plna', did you mean 'plan'?" before CLI11 sees the arguments.
int CheckSubcommand(int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') return -1;
  std::vector<std::string> names;
  for (const memopt::cli::Subcommand& s : memopt::cli::Subcommands()) {
    names.push_back(s.name);
    if (std::strcmp(s.name, argv[1]) == 0) return -1;
  }
  if (std::strcmp(argv[1], "help") == 0) return -1;
  std::string message = std::string("unknown command '") + argv[1] + "'";
  std::string guess = memopt::ClosestMatch(argv[1], names);
  if (!guess.empty()) message += ", did you mean '" + guess + "'?";
  message += " (run `memopt --help` for the list)";
  return memopt::cli::ReportError(memopt::UsageError(message));
}

/// Long option names (with "--") of the app and the subcommand named in argv.
std::vector<std::string> KnownOptions(CLI::App& app, int argc, char** argv) {
  std::vector<std::string> names;
  auto collect = [&](const CLI::App* a) {
    for (const CLI::Option* opt : a->get_options()) {
      for (const std::string& n : opt->get_lnames()) names.push_back("--" + n);
    }
  };
  collect(&app);
  for (int i = 1; i < argc; ++i) {
    if (argv[i][0] == '-') continue;
    for (const CLI::App* sub : app.get_subcommands({})) {
      if (sub->get_name() == argv[i]) collect(sub);
    }
    break;
  }
  return names;
}

/// CLI11's "The following arguments were not expected: --timline" plus a did-you-mean for each
/// unknown long option.
std::string ExplainExtras(const CLI::ExtrasError& e, CLI::App& app, int argc, char** argv) {
  std::string message = e.what();
  const std::vector<std::string> known = KnownOptions(app, argc, argv);
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--", 0) != 0 || arg == "--") continue;
    arg = arg.substr(0, arg.find('='));
    if (std::find(known.begin(), known.end(), arg) != known.end()) continue;
    const std::string guess = memopt::ClosestMatch(arg, known);
    if (!guess.empty()) message += "; did you mean '" + guess + "' for '" + arg + "'?";
  }
  return message;
}

/// Ends the process's output: a failed write to stdout (a full disk, /dev/full) turns a success
/// into exit 1 with one error line, never a silent success.
int FinishStdout(int code) {
  memopt::Status closed = memopt::cli::CloseStdout();
  // A command that failed has said why; a failed write is its error only when it succeeded.
  if (!closed.ok() && code == memopt::cli::kExitOk) return memopt::cli::ReportError(closed);
  return code;
}

}  // namespace

/// Ctrl-C / SIGTERM: remove the temporaries of half-written outputs, then exit 130. Outputs are
/// renamed into place only when complete, so no partial output file is left.
extern "C" void OnInterrupt(int) {
  memopt::io::RemoveOpenTempFiles();
  static const char kMessage[] = "memopt: interrupted; no output was written\n";
  [[maybe_unused]] ssize_t n = ::write(STDERR_FILENO, kMessage, sizeof kMessage - 1);
  ::_exit(130);
}

int main(int argc, char** argv) {
  using namespace memopt::cli;
  std::signal(SIGINT, OnInterrupt);
  std::signal(SIGTERM, OnInterrupt);
  if (int code = CheckSubcommand(argc, argv); code >= 0) return code;

  CLI::App app{"memopt: cut the peak GPU memory of ONNX training graphs by recomputing activations", "memopt"};
  app.footer(kExitCodeHelp);
  app.require_subcommand(1);
  GlobalOptions globals;
  int verbose = 0, quiet = 0;
  app.add_flag("-v,--verbose", verbose, "more output on stderr: stage times (-v), details (-vv, -vvv)");
  app.add_flag("-q,--quiet", quiet, "less output on stderr: no hints (-q), no warnings either (-qq)");
  app.add_flag("--no-color", globals.no_color, "never colour output (NO_COLOR is honoured too)");
  app.set_version_flag("--version", VersionString(), "print the version of memopt and of onnx, protobuf, CUDA");

  std::function<int()> run;
  for (const Subcommand& s : Subcommands()) {
    CLI::App* sub = app.add_subcommand(s.name, s.summary);
    auto runner = s.setup(*sub, globals);
    sub->callback([&run, runner] { run = runner; });
  }
  if (argc == 2 && std::strcmp(argv[1], "help") == 0) {
    std::cout << app.help();
    return FinishStdout(kExitOk);
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    return FinishStdout(kExitOk);
  } catch (const CLI::CallForAllHelp&) {
    std::cout << app.help("", CLI::AppFormatMode::All);
    return FinishStdout(kExitOk);
  } catch (const CLI::CallForVersion&) {
    std::cout << VersionString() << "\n";
    return FinishStdout(kExitOk);
  } catch (const CLI::ExtrasError& e) {
    ConfigureTerminal(globals);
    return ReportError(memopt::UsageError(ExplainExtras(e, app, argc, argv)));
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return kExitOk;
    ConfigureTerminal(globals);
    return ReportError(memopt::UsageError(e.what()));
  }
  globals.verbosity = verbose - quiet;
  if (std::getenv("NO_COLOR") != nullptr) globals.no_color = true;
  ConfigureTerminal(globals);
  Stopwatch watch;
  // No subcommand ends on an uncaught exception: the library reports errors as values, and what
  // escapes anyway (an allocation the library did not guard) is one error line, exit 1.
  int code = kExitUsage;
  try {
    code = run ? run() : kExitUsage;
  } catch (const std::bad_alloc&) {
    code = ReportError(memopt::InvalidInput("out of memory: the step needs more memory than this process can "
                                            "allocate (check --dims and the model's shapes)"));
  } catch (const std::exception& e) {
    code = ReportError(memopt::InternalError(std::string("unexpected error: ") + e.what()));
  }
  code = FinishStdout(code);
  if (globals.verbosity >= 1) {
    std::string command;
    for (int i = 1; i < argc; ++i) command += std::string(i > 1 ? " " : "") + argv[i];
    // Peak resident memory of the whole run: what scan/plan cost beside the model's weights.
    struct rusage usage {};
    ::getrusage(RUSAGE_SELF, &usage);
    const double peak_rss_mib = static_cast<double>(usage.ru_maxrss) / 1024.0;  // ru_maxrss is KiB
    std::fprintf(stderr, "memopt: %s | %.2fs | peak RSS %.1f MiB | exit %d | memopt %s\n",
                 code == 0 ? "PASSED" : "FAILED", watch.ElapsedMs() / 1000.0, peak_rss_mib, code, command.c_str());
  }
  return code;
}
