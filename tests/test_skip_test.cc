// Hidden test cases ([.], so neither a plain run nor ctest's discovery picks them) for
// tests/check_skip_exit.sh, which runs them by tag and checks the runner's exit codes.
#include "test_skip.h"

namespace memopt::testing {
namespace {

TEST_CASE("skip self-test: skipped before any assertion", "[.skip-selftest][.skip-selftest-skips]") {
  MarkSkipped("self-test: nothing to run here");
}

TEST_CASE("skip self-test: passes", "[.skip-selftest][.skip-selftest-passes]") { CHECK(kSkipExitCode == 77); }

TEST_CASE("skip self-test: checks something, then skips the rest", "[.skip-selftest][.skip-selftest-partial]") {
  CHECK(kSkipExitCode == 77);
  MarkSkipped("self-test: the rest needs data");
}

TEST_CASE("skip self-test: skips, then fails", "[.skip-selftest][.skip-selftest-fails]") {
  MarkSkipped("self-test: skipped");
  CHECK(kSkipExitCode == 0);  // fails on purpose: a failure is never reported as skipped
}

}  // namespace
}  // namespace memopt::testing
