#!/usr/bin/env bash
# Benchmarks `memopt scan` on synthetic GPT-2-like training graphs of growing depth and checks
# that the cost grows linearly with the node count. Builds nothing; see docs/benchmarks.md.
#
#   scripts/bench_scan.sh [MEMOPT_BINARY]        (default: build/tools/memopt)
#
# Environment (all optional):
#   BENCH_LAYERS   layer counts to run            (default "12 24 48 96")
#   BENCH_REPEATS  runs per graph, median taken   (default 3)
#   BENCH_DIMS     --dims for the scan            (default batch=8,seq_len=1024)
#   BENCH_DIR      where graphs are generated and reused (default ${TMPDIR:-/tmp}/memopt_bench_graphs)
#   BENCH_GEN_ARGS extra generator flags, e.g. "--dtype float --hidden 1024 --heads 16"
#   PYTHON         interpreter for the generator  (default python3)
#
# Exit status: 0 whatever the timings say (a benchmark, not a test); non-zero only when the
# generator or the binary fails, or the binary prints no timing line.
set -euo pipefail

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo_root=$(cd "${script_dir}/.." && pwd)
bin=${1:-${repo_root}/build/tools/memopt}
layers=${BENCH_LAYERS:-12 24 48 96}
repeats=${BENCH_REPEATS:-3}
dims=${BENCH_DIMS:-batch=8,seq_len=1024}
graph_dir=${BENCH_DIR:-${TMPDIR:-/tmp}/memopt_bench_graphs}
gen_args=${BENCH_GEN_ARGS:-}
python=${PYTHON:-python3}
generator=${script_dir}/gen_transformer_training.py

die() { echo "bench_scan: $*" >&2; exit 2; }

[[ -x ${bin} ]] || die "memopt binary '${bin}' not found or not executable (build it, or pass its path)"
[[ ${repeats} =~ ^[1-9][0-9]*$ ]] || die "BENCH_REPEATS must be a positive integer"
mkdir -p "${graph_dir}"
err_file=$(mktemp)
trap 'rm -f "${err_file}"' EXIT

# median of the numbers given as arguments
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1} END {
  if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# field NAME of a timing line "memopt: timings: load_ms=.. infer_ms=.. ..."
field() { sed -n "s/.*[[:space:]]$1=\([^[:space:]]*\).*/\1/p" <<<"$2"; }

human_size() { awk -v b="$1" 'BEGIN { if (b >= 1048576) printf "%.1f MiB", b / 1048576;
  else printf "%.1f KiB", b / 1024 }'; }

rows=()
for L in ${layers}; do
  [[ ${L} =~ ^[1-9][0-9]*$ ]] || die "bad layer count '${L}' in BENCH_LAYERS"
  tag=${gen_args//[^A-Za-z0-9_.=-]/_}
  graph=${graph_dir}/gpt2_L${L}${tag:+_${tag}}.onnx
  # reuse a generated graph unless the generator changed since
  if [[ ! -s ${graph} || ${generator} -nt ${graph} ]]; then
    # shellcheck disable=SC2086  # gen_args is a list of flags
    "${python}" "${generator}" --layers "${L}" ${gen_args} --out "${graph}.tmp" \
      || die "generator failed for ${L} layers"
    mv "${graph}.tmp" "${graph}"
  fi
  load=() infer=() analysis=() total=() nodes=""
  for ((r = 0; r < repeats; r++)); do
    rc=0
    "${bin}" scan "${graph}" --dims "${dims}" --timings --format json -o /dev/null 2>"${err_file}" || rc=$?
    if ((rc != 0)); then
      cat "${err_file}" >&2
      echo "bench_scan: '${bin} scan ${graph}' failed (exit ${rc})" >&2
      exit "${rc}"
    fi
    line=$(grep 'memopt: timings:' "${err_file}" | tail -n 1 || true)
    [[ -n ${line} ]] || { cat "${err_file}" >&2; die "no 'memopt: timings:' line on stderr (is --timings implemented?)"; }
    load+=("$(field load_ms "${line}")")
    infer+=("$(field infer_ms "${line}")")
    analysis+=("$(field analysis_ms "${line}")")
    total+=("$(field total_ms "${line}")")
    nodes=$(field nodes "${line}")
    [[ -n ${load[-1]} && -n ${infer[-1]} && -n ${analysis[-1]} && -n ${total[-1]} && -n ${nodes} ]] \
      || die "cannot parse timing line: ${line}"
  done
  rows+=("${L} ${nodes} $(stat -c %s "${graph}") $(median "${load[@]}") $(median "${infer[@]}") \
$(median "${analysis[@]}") $(median "${total[@]}")")
done

echo "memopt scan benchmark: ${bin}"
echo "dims ${dims}, median of ${repeats} run(s), graphs in ${graph_dir}${gen_args:+ (generator: ${gen_args})}"
echo
printf '%6s %7s %10s %9s %9s %11s %9s %11s %12s\n' layers nodes size load_ms infer_ms analysis_ms total_ms \
  "(i+a)/load" "ms/1k_nodes"
for row in "${rows[@]}"; do
  read -r L n bytes lo in an to <<<"${row}"
  awk -v L="${L}" -v n="${n}" -v s="$(human_size "${bytes}")" -v lo="${lo}" -v in_="${in}" -v an="${an}" \
    -v to="${to}" 'BEGIN {
      ratio = lo > 0 ? sprintf("%.2f", (in_ + an) / lo) : "inf"
      printf "%6d %7d %10s %9.2f %9.2f %11.2f %9.2f %11s %12.3f\n", L, n, s, lo, in_, an, to, ratio, to * 1000 / n }'
done
echo

# verdict: per-node total time of the deepest vs the shallowest graph, and infer+analysis vs load
printf '%s\n' "${rows[@]}" | awk -v limit=1.5 '
  { L[NR] = $1; n[NR] = $2; lo[NR] = $4; ia[NR] = $5 + $6; to[NR] = $7 }
  END {
    if (NR < 2) { print "verdict: need at least two layer counts to judge growth"; exit }
    first = to[1] / n[1]; last = to[NR] / n[NR]
    growth = first > 0 ? last / first : 0
    lin = (first > 0 && growth <= limit) ? "PASS" : "FAIL"
    slow = ""
    for (i = 1; i <= NR; i++) if (ia[i] >= lo[i]) slow = slow " " L[i]
    cheap = slow == "" ? "PASS (all sizes)" : "FAIL (layers" slow ")"
    printf "verdict: linear growth %s (per-node time %dL/%dL = %.2fx, limit %.1fx); infer+analysis < load: %s\n",
      lin, L[NR], L[1], growth, limit, cheap
  }'
exit 0
