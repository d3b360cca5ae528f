#!/usr/bin/env bash
# Runs one golden CLI case: tests/golden/cli/<case>.cmd holds the memopt arguments on one line
# (shell words; @DATA@ = shared data folder, @SRC@ = source tree, @WORK@ = scratch folder).
# Compares stdout with <case>.stdout, the first stderr line with <case>.stderr and the exit code
# with <case>.exit (0 when absent). UPDATE_GOLDENS=1 rewrites the expected files instead.
# Exit 77 (ctest: skipped) when the case needs the shared data folder and it is absent.
set -u
memopt=$1 case_file=$2 data_dir=$3 src_dir=$4 work_dir=$5
base=${case_file%.cmd}
name=$(basename "$base")
args=$(head -n 1 "$case_file")
if [[ $args == *@DATA@* && ! -d $data_dir ]]; then
  echo "skipped: shared test data not found at $data_dir"
  exit 77
fi
mkdir -p "$work_dir/$name"
args=${args//@DATA@/$data_dir}
args=${args//@SRC@/$src_dir}
args=${args//@WORK@/$work_dir/$name}
eval "set -- $args"
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
NO_COLOR=1 COLUMNS=120 "$memopt" "$@" >"$out" 2>"$err" </dev/null
code=$?
# The scratch folder lies inside the source tree's build folder: replace it first.
# How many simulations a budget plan took depends on how far its time-limited integer program got
# (machine speed, sanitizers), not on the plan: the count is left out.
subst="s#$work_dir/$name#@WORK@#g; s#$data_dir#@DATA@#g; s#$src_dir#@SRC@#g"
subst+='; s#[0-9][0-9]* simulations#N simulations#g; s#"evaluations": [0-9][0-9]*#"evaluations": N#g'
first_err=$(head -n 1 "$err" | sed "$subst")
sed -i "$subst" "$out"
if [[ ${UPDATE_GOLDENS:-0} == 1 ]]; then
  cp "$out" "$base.stdout"
  if [[ -n $first_err ]]; then printf '%s\n' "$first_err" >"$base.stderr"; else rm -f "$base.stderr"; fi
  if [[ $code != 0 ]]; then echo "$code" >"$base.exit"; else rm -f "$base.exit"; fi
  echo "updated $name"
  exit 0
fi
status=0
expected_code=0
[[ -f $base.exit ]] && expected_code=$(cat "$base.exit")
if [[ $code != "$expected_code" ]]; then
  echo "exit code: expected $expected_code, got $code"; status=1
fi
if [[ -f $base.stdout ]] && ! diff -u "$base.stdout" "$out"; then
  echo "stdout differs from $base.stdout"; status=1
fi
if [[ -f $base.stderr ]]; then
  if [[ $first_err != "$(head -n 1 "$base.stderr")" ]]; then
    echo "stderr first line: expected '$(head -n 1 "$base.stderr")', got '$first_err'"; status=1
  fi
elif [[ -n $first_err && $expected_code == 0 ]]; then
  : # warnings on stderr are allowed when no .stderr file pins them
fi
[[ $status != 0 ]] && { echo "--- stderr ---"; cat "$err"; }
exit $status
