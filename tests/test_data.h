// Access to ../shared/data for tests. When the folder is absent (a user's clone), tests that need
// it return early with a clear message instead of failing, and ctest reports them as skipped
// (test_skip.h): call SharedData before any assertion, and keep the checks that need no shared
// data in test cases of their own.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "test_skip.h"

namespace memopt::testing {

/// Full path of `relative` under the shared data folder, or nullopt when absent: then the test
/// case is marked skipped (MarkSkipped) and should return.
inline std::optional<std::string> SharedData(const std::string& relative) {
  std::filesystem::path p = std::filesystem::path(MEMOPT_TEST_DATA_DIR) / relative;
  if (!std::filesystem::exists(p)) {
    MarkSkipped("shared test data not found: " + p.string() +
                " (clone the project beside ../shared/data to run this test)");
    return std::nullopt;
  }
  return p.string();
}

/// Path of a file in the source tree (tests/data, configs, ...).
inline std::string SourcePath(const std::string& relative) {
  return (std::filesystem::path(MEMOPT_SOURCE_DIR) / relative).string();
}

/// A test graph named "src:<path>" (in the source tree) or by its path under the shared data
/// folder (nullopt, and the test case marked skipped, when that folder is absent).
inline std::optional<std::string> DataPath(const std::string& name) {
  if (name.rfind("src:", 0) == 0) return SourcePath(name.substr(4));
  return SharedData(name);
}

}  // namespace memopt::testing
