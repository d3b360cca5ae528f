#!/usr/bin/env bash
# The CPU executor's process memory against its planned arena: for each case, `memopt bench`
# (JSON) and one table row: the arena, the resident-set rise over the runs and its ratio to the
# arena (what a step holds beyond code, model, weights and inputs: the arena plus kernel
# temporaries), the peak less weights and inputs over the arena (code and libraries included),
# and the step time. See docs/benchmarks.md ("Process memory against the arena").
#
#   scripts/bench_rss.sh [MEMOPT_BINARY] -- CASE...
#   CASE = MODEL[:DIMS]       e.g. /tmp/gpt_12.onnx:batch=2,seq_len=128   (DIMS as --dims takes)
#          MODEL@INPUTS_DIR   inputs from a folder (bench --inputs)
#
# Environment (optional): BENCH_ITERS (default 2), BENCH_WARMUP (1), BENCH_THREADS (the
# binary's default when unset). Exit status 0 whatever the ratios are (a benchmark); non-zero
# when the binary fails on a case.
set -euo pipefail

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bin=${script_dir}/../build/tools/memopt
if [[ $# -gt 0 && $1 != "--" ]]; then bin=$1; shift; fi
[[ ${1:-} == "--" ]] && shift
[[ -x ${bin} ]] || { echo "bench_rss: memopt binary '${bin}' not found (build it, or pass its path)" >&2; exit 2; }
[[ $# -gt 0 ]] || { echo "bench_rss: no cases (usage: bench_rss.sh [BINARY] -- MODEL[:DIMS]|MODEL@INPUTS ...)" >&2; exit 2; }
iters=${BENCH_ITERS:-2}
warmup=${BENCH_WARMUP:-1}
threads=()
[[ -n ${BENCH_THREADS:-} ]] && threads=(--threads "${BENCH_THREADS}")

printf '| case | arena | RSS rise | rise / arena | (peak - weights - inputs) / arena | step ms |\n'
printf '|---|---|---|---|---|---|\n'
for case in "$@"; do
  args=()
  if [[ ${case} == *@* ]]; then
    model=${case%%@*}
    args=(--inputs "${case#*@}")
  elif [[ ${case} == *:* ]]; then
    model=${case%%:*}
    args=(--dims "${case#*:}")
  else
    model=${case}
  fi
  json=$("${bin}" bench "${model}" "${args[@]}" "${threads[@]}" --iters "${iters}" --warmup "${warmup}" \
    --format json 2>/dev/null) || { echo "bench_rss: memopt bench failed on ${case}" >&2; exit 1; }
  python3 -c '
import json, sys
case, doc = sys.argv[1], json.loads(sys.argv[2])
m = doc["models"][0]
mib = lambda b: "%.1f MiB" % (b / 2**20)
arena = m.get("arena_bytes", 0)
rise = m["rss_peak_bytes"] - m["rss_before_bytes"] if "rss_before_bytes" in m else None
print("| %s | %s | %s | %s | %s | %.1f |" % (
    case, mib(arena) if arena else "none",
    mib(rise) if rise is not None else "n/a",
    "%.3f" % m["rss_growth_over_arena"] if "rss_growth_over_arena" in m else "n/a",
    "%.3f" % m["rss_less_weights_and_inputs_over_arena"] if "rss_less_weights_and_inputs_over_arena" in m else "n/a",
    m["time_ms"]["median"]))
' "${case}" "${json}"
done
