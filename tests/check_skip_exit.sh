#!/usr/bin/env bash
# The unit-test runner's exit codes (tests/catch_main.cc, tests/test_skip.h), on the hidden
# self-test cases of tests/test_skip_test.cc: 77 (ctest: skipped) only when every test case that
# ran was skipped and none failed.
# Usage: check_skip_exit.sh MEMOPT_UNIT_TESTS
set -u
bin=$1
status=0
expect() {  # exit_code spec [stderr_pattern]
  local want=$1 spec=$2 pattern=${3:-}
  "$bin" "$spec" >out.log 2>err.log
  local got=$?
  if [[ $got != "$want" ]]; then
    echo "FAIL: '$spec' exited $got, expected $want"; cat out.log err.log; status=1
  fi
  if [[ -n $pattern ]] && ! grep -q -- "$pattern" err.log out.log; then
    echo "FAIL: '$spec': no '$pattern' in the output"; cat out.log err.log; status=1
  fi
}
cd "$(mktemp -d)" || exit 1
expect 77 "[.skip-selftest-skips]" "self-test: nothing to run here"
expect 0 "[.skip-selftest-passes]"
expect 0 "[.skip-selftest-skips],[.skip-selftest-passes]"
expect 0 "[.skip-selftest-partial]" "note: test case 'skip self-test: checks something, then skips the rest' ran 1"
expect 1 "[.skip-selftest-fails]"
expect 1 "[.skip-selftest-skips],[.skip-selftest-fails]"
[[ $status == 0 ]] && echo "skip exit codes: all checks passed"
exit $status
