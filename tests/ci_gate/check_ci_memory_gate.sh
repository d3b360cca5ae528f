#!/usr/bin/env bash
# scripts/ci_memory_gate.sh on a training graph without symbolic dims (memopt grad of the tiny
# GPT-2 fixture): DIMS may be empty or "-", the reports go to OUT_DIR (default ./memopt-gate) and
# never over the user's files in the current folder, and a baseline that the run overwrites is
# read before it is.
# Usage: check_ci_memory_gate.sh MEMOPT SOURCE_DIR WORK_DIR
set -u
memopt=$1 src=$2 work=$3
gate=$src/scripts/ci_memory_gate.sh
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
status=0
fail() { echo "FAIL: $*"; status=1; }
run_gate() {  # expected_exit args...: runs the gate, output in gate.log
  local expected=$1; shift
  MEMOPT=$memopt bash "$gate" "$@" >gate.log 2>&1
  local code=$?
  if [[ $code != "$expected" ]]; then
    fail "ci_memory_gate.sh $* exited $code, expected $expected"
    cat gate.log
  fi
}

"$memopt" grad "$src/tests/data/grad_fixtures/gpt2_tiny/model.onnx" -o train.onnx >/dev/null || exit 1
echo '{"user": "my own file"}' >mem_opt.json
cp mem_opt.json expected_user_file.json

# (a) no DIMS at all, an empty DIMS and "-"; (b) everything lands in ./memopt-gate.
run_gate 0 train.onnx
run_gate 0 train.onnx ""
for f in memopt-scan.json memopt-plan.json mem_opt.json; do
  [[ -s memopt-gate/$f ]] || fail "memopt-gate/$f was not written"
done
[[ -e memopt-scan.json || -e memopt-plan.json ]] && fail "reports were written into the current folder"
cmp -s mem_opt.json expected_user_file.json || fail "the user's mem_opt.json was overwritten"
grep -q "to memopt-gate/" gate.log || fail "the gate does not say where it writes: $(cat gate.log)"
OUT_DIR=elsewhere/reports run_gate 0 train.onnx -
[[ -s elsewhere/reports/memopt-plan.json ]] || fail "OUT_DIR=elsewhere/reports was not used"

# A gate that fails: --fail-above below the planned peak exits 3.
run_gate 3 train.onnx - "" 2 1KiB

# (c) the baseline is the report this run overwrites: it still counts with its old content. The
# old peak (1000 bytes) is far below this graph's, so the gate fails.
echo '{"peak": {"bytes": 1000}}' >memopt-gate/memopt-scan.json
run_gate 3 train.onnx "" memopt-gate/memopt-scan.json 0
grep -q "baseline" gate.log || fail "the failed gate does not mention the baseline: $(cat gate.log)"
grep -q '"bytes": 1000' memopt-gate/memopt-scan.json && fail "memopt-gate/memopt-scan.json was not rewritten"
# ... and the last plan report as the baseline of an unchanged graph passes at 0%.
run_gate 0 train.onnx "" memopt-gate/memopt-plan.json 0
cmp -s mem_opt.json expected_user_file.json || fail "the user's mem_opt.json was overwritten"

[[ $status == 0 ]] && echo "ci_memory_gate.sh: all checks passed"
exit $status
