// Access to ../shared/data for tests. When the folder is absent (a user's clone), tests that need
// it return early with a clear message instead of failing.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include <catch2/catch.hpp>

namespace memopt::testing {

/// Full path of `relative` under the shared data folder, or nullopt (with a WARN) when absent.
inline std::optional<std::string> SharedData(const std::string& relative) {
  std::filesystem::path p = std::filesystem::path(MEMOPT_TEST_DATA_DIR) / relative;
  if (!std::filesystem::exists(p)) {
    WARN("skipped: shared test data not found: " << p.string()
         << " (clone the project beside ../shared/data to run this test)");
    return std::nullopt;
  }
  return p.string();
}

/// Path of a file in the source tree (tests/data, configs, ...).
inline std::string SourcePath(const std::string& relative) {
  return (std::filesystem::path(MEMOPT_SOURCE_DIR) / relative).string();
}

}  // namespace memopt::testing
