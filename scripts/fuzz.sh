#!/usr/bin/env bash
# Builds memopt's libFuzzer targets (clang, ASan + UBSan) and runs each for a fixed time, then
# prints executions and crashes per target. Exit 1 when any target crashed, leaked or hung.
# Usage: scripts/fuzz.sh [SECONDS_PER_TARGET=60] [BUILD_DIR=build-fuzz]
#   FUZZ_TARGETS="fuzz_config fuzz_dims_size" restricts the targets; FUZZ_JOBS=N runs N workers;
#   FUZZ_PARALLEL=N runs N targets at once (default 1);
#   FUZZ_MAX_LEN caps input sizes (default 262144; small values make the model loader ~10x faster);
#   FUZZ_RUNS=N stops each target after N executions instead (SECONDS then only caps the time);
#   FUZZ_RSS_LIMIT_MB (default 2560): libFuzzer's own bookkeeping (entropic feature counts) grows
#   by a few hundred MB per million executions, so runs of 10M need more; single allocations over
#   2 GB are reported whatever the limit. FUZZ_FLAGS adds libFuzzer flags (e.g. -entropic=0, whose
#   per-input bookkeeping otherwise slows very long runs down several-fold).
# Needs: clang (Debian: apt-get install clang). Seeds: the shared test graphs (../shared/data),
# tests/data, the golden configs and tests/fuzz/seeds. Crash inputs stay in BUILD_DIR/fuzz/<target>/.
set -uo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
build=${2:-build-fuzz}
targets=${FUZZ_TARGETS:-"fuzz_model_loader fuzz_config fuzz_dims_size fuzz_text_graph"}
data=../shared/data

if ! command -v clang++ >/dev/null 2>&1; then
  echo "fuzz.sh: clang++ not found (apt-get install clang)" >&2
  exit 2
fi
# A build folder already configured with MEMOPT_FUZZ=ON (e.g. scripts/sanitize.sh's) is reused.
if ! grep -q '^MEMOPT_FUZZ:BOOL=ON' "$build/CMakeCache.txt" 2>/dev/null; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
        -DMEMOPT_FUZZ=ON -DMEMOPT_BUILD_TESTS=OFF >/dev/null || exit 2
fi
# shellcheck disable=SC2086
cmake --build "$build" --target $targets >/dev/null || { echo "fuzz.sh: build failed" >&2; exit 2; }

seed_dirs() {
  case $1 in
    fuzz_model_loader)
      echo tests/data/bad tests/data/tiny_external tests/data/plan
      [[ -d $data ]] && echo "$data/ort_recompute" "$data/ort_training_api" "$data/forward" ;;
    fuzz_config) echo tests/data/configs configs ;;
    fuzz_dims_size) echo tests/fuzz/seeds/dims ;;
    fuzz_text_graph) echo tests/fuzz/seeds/text_graph ;;
  esac
}

run_target() {  # target: runs it, writes its result row to BUILD_DIR/fuzz/<target>/result.txt
  local t=$1 work=$build/fuzz/$1
  mkdir -p "$work/corpus"
  rm -f "$work/result.txt"
  # Seeds are copied (libFuzzer writes new inputs into its first corpus folder).
  for d in $(seed_dirs "$t"); do
    [[ -d $d ]] && find "$d" -maxdepth 1 -type f -size -4M -exec cp -n {} "$work/corpus/" \;
  done
  local log=$work/log.txt start=$SECONDS
  ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    "$build/tests/fuzz/$t" "$work/corpus" -max_total_time="$seconds" -timeout=10 -rss_limit_mb="${FUZZ_RSS_LIMIT_MB:-2560}" -malloc_limit_mb=2048 \
    -max_len="${FUZZ_MAX_LEN:-262144}" -print_final_stats=1 -artifact_prefix="$work/" ${FUZZ_JOBS:+-fork=$FUZZ_JOBS} ${FUZZ_RUNS:+-runs=$FUZZ_RUNS} ${FUZZ_FLAGS:-} >"$log" 2>&1
  local rc=$?
  local execs crashes result=ok
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -n 1)
  crashes=$(find "$work" -maxdepth 1 \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \) | wc -l)
  if [[ $rc != 0 || $crashes != 0 ]]; then result="FAILED (see $log)"; fi
  printf '%-20s %12s %8s %8s %s\n' "$t" "${execs:-?}" "$((SECONDS - start))" "$crashes" "$result" >"$work/result.txt"
}

# FUZZ_PARALLEL=N runs N targets at a time (each on one core; CI's 2 cores run two).
parallel=${FUZZ_PARALLEL:-1}
running=0
for t in $targets; do
  if ((running >= parallel)); then
    wait -n
    running=$((running - 1))
  fi
  run_target "$t" &
  running=$((running + 1))
done
wait

status=0
printf '%-20s %12s %8s %8s %s\n' target executions seconds crashes result
for t in $targets; do
  row=$(cat "$build/fuzz/$t/result.txt" 2>/dev/null || printf '%-20s %12s %8s %8s %s' "$t" "?" "?" "?" "FAILED (no result)")
  echo "$row"
  [[ $row == *FAILED* ]] && status=1
done
exit $status
