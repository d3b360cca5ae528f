// Every op with a gradient rule has a finite-difference check: its name appears as a node of a
// checked graph in one of the grad_check_*_test.cc files or the tests of lib/ops (ONNX text
// `Op(...)`/`Op <...>`, or a quoted op name). Adding a rule without a check fails here.
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include <catch2/catch.hpp>

#include "grad/grad_builder.h"
#include "test_data.h"

namespace memopt {
namespace {

TEST_CASE("grad check coverage: every gradient rule has a finite-difference check", "[grad]") {
  namespace fs = std::filesystem;
  std::string checks;
  auto read = [&](const fs::path& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    checks += text.str();
  };
  for (const auto& entry : fs::directory_iterator(testing::SourcePath("lib/grad"))) {
    const std::string file = entry.path().filename().string();
    if (file.rfind("grad_check_", 0) != 0 || file == "grad_check_coverage_test.cc") continue;
    read(entry.path());
  }
  // Ops defined in lib/ops/<family> keep their checks in their own tests.
  for (const auto& entry : fs::recursive_directory_iterator(testing::SourcePath("lib/ops"))) {
    const std::string file = entry.path().filename().string();
    if (file.size() > 8 && file.compare(file.size() - 8, 8, "_test.cc") == 0) read(entry.path());
  }
  REQUIRE_FALSE(checks.empty());
  std::vector<std::string> unchecked;
  for (const std::string& key : GradientOps()) {
    const std::string op = key.substr(key.rfind(':') == std::string::npos ? 0 : key.rfind(':') + 1);
    const std::regex used("(\\b" + op + "\\s*[<(])|(\"" + op + "\")");
    if (!std::regex_search(checks, used)) unchecked.push_back(key);
  }
  INFO("gradient rules without a check: " << unchecked.size());
  for (const std::string& op : unchecked) UNSCOPED_INFO(op);
  CHECK(unchecked.empty());
}

}  // namespace
}  // namespace memopt
