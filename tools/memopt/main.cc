// memopt: cut the peak memory of ONNX training graphs by recomputing activations.
#include <cstring>
#include <iostream>

#include <google/protobuf/stubs/common.h>
#include <onnx/common/version.h>

#include "cli.h"
#include "sym/sym_expr.h"

namespace {

constexpr const char* kExitCodeHelp =
    "Exit codes: 0 ok, 1 error (bad model, config or data), 2 usage, 3 budget/gate not met,\n"
    "            4 no GPU, 5 verification failed, 130 interrupted.";

std::string VersionString() {
  std::string v = std::string("memopt ") + MEMOPT_VERSION + " (onnx " + onnx::LAST_RELEASE_VERSION + ", protobuf " +
                  google::protobuf::internal::VersionString(GOOGLE_PROTOBUF_VERSION) + ")";
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace memopt::cli;
  // A mistyped subcommand gets a suggestion instead of CLI11's generic message.
  if (argc >= 2 && argv[1][0] != '-') {
    std::vector<std::string> names;
    bool known = false;
    for (const Subcommand& s : Subcommands()) {
      names.push_back(s.name);
      known = known || std::strcmp(s.name, argv[1]) == 0;
    }
    if (!known && std::strcmp(argv[1], "help") != 0) {
      std::string message = std::string("unknown command '") + argv[1] + "'";
      std::string guess = memopt::ClosestMatch(argv[1], names);
      if (!guess.empty()) message += ", did you mean '" + guess + "'?";
      message += " (run `memopt --help` for the list)";
      return ReportError(memopt::UsageError(message));
    }
  }

  CLI::App app{"memopt: cut the peak GPU memory of ONNX training graphs by recomputing activations", "memopt"};
  app.footer(kExitCodeHelp);
  app.require_subcommand(1);
  GlobalOptions globals;
  int verbose = 0, quiet = 0;
  app.add_flag("-v,--verbose", verbose, "more output on stderr (repeatable)");
  app.add_flag("-q,--quiet", quiet, "less output on stderr (repeatable)");
  app.add_flag("--no-color", globals.no_color, "never colour output (NO_COLOR is honoured too)");
  app.set_version_flag("--version", VersionString());

  std::function<int()> run;
  for (const Subcommand& s : Subcommands()) {
    CLI::App* sub = app.add_subcommand(s.name, s.summary);
    auto runner = s.setup(*sub, globals);
    sub->callback([&run, runner] { run = runner; });
  }
  if (argc == 2 && std::strcmp(argv[1], "help") == 0) {
    std::cout << app.help();
    return kExitOk;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    return kExitOk;
  } catch (const CLI::CallForAllHelp&) {
    std::cout << app.help("", CLI::AppFormatMode::All);
    return kExitOk;
  } catch (const CLI::CallForVersion&) {
    std::cout << VersionString() << "\n";
    return kExitOk;
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return kExitOk;
    return ReportError(memopt::UsageError(e.what()));
  }
  globals.verbosity = verbose - quiet;
  if (std::getenv("NO_COLOR") != nullptr) globals.no_color = true;
  return run ? run() : kExitUsage;
}
