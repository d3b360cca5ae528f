#!/usr/bin/env bash
# Catch2 2.13 (Debian 12's) indents a failing test case's wrapped name at its first ": "; when that
# colon lies past about column 75 the console reporter loops forever (Release) or aborts on an
# assertion (Debug) instead of reporting the failure, so a failing test would hang ctest. Every
# TEST_CASE name's first colon must therefore lie within its first 70 characters.
# Usage: check_test_names.sh SRC_DIR
set -u
src=$1
bad=$(grep -rhoE 'TEST_CASE\("[^"]*"' "$src/lib" "$src/cuda" "$src/tools" "$src/tests" --include='*.cc' |
  sed 's/^TEST_CASE("//; s/"$//' | awk '{ i = index($0, ":"); if (i > 70) print i ": " $0 }')
if [[ -n $bad ]]; then
  echo "test case names whose first colon lies past column 70 (Catch2 hangs reporting their failures):"
  echo "$bad"
  exit 1
fi
echo "test case names: every first colon within 70 characters"
