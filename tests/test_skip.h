// Skipped test cases for Catch2 2.13, which has no SKIP macro: a test case that cannot run here
// (no shared data, no GPU) calls MarkSkipped(reason) and returns. The runner (catch_main.cc)
// exits with kSkipExitCode when every test case it ran was skipped and nothing failed, and ctest
// (SKIP_RETURN_CODE, tests/CMakeLists.txt) reports such a test as "Skipped", not "Passed".
//
// A test case counts as skipped only when it called MarkSkipped and ran no assertion at all: one
// that checked something and then skipped the rest counts as passed (the runner prints a note
// naming it). Such a test case hides work either way, so split it: the part that always runs in
// one test case, the part that needs the data or the GPU in another.
#pragma once

#include <string>

#include <catch2/catch.hpp>

namespace memopt::testing {

/// The exit code of the unit-test binary when every test case it ran was skipped (automake's
/// convention, which ctest's SKIP_RETURN_CODE names).
inline constexpr int kSkipExitCode = 77;

/// Records that the running test case skips (defined in catch_main.cc).
void RecordSkip(const std::string& reason);

/// Marks the running test case as skipped, with `reason` shown as a Catch warning ("skipped:
/// ..."). The caller then returns without asserting anything.
inline void MarkSkipped(const std::string& reason) {
  WARN("skipped: " << reason);
  RecordSkip(reason);
}

}  // namespace memopt::testing
