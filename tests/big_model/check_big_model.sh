#!/usr/bin/env bash
# A training graph whose weights exceed 2 GB goes through grad, scan, plan and apply without its
# weights being read: the weights are a sparse file of zeros (no disk used), and every step's
# peak resident memory (from `memopt -v`) must stay far below the weight size. Prints one table.
# Also scans and plans a forward model whose protobuf itself is past 2 GB (inline raw_data).
#
# Usage: check_big_model.sh MEMOPT MAKE_BIG_MODEL WORK_DIR [LAYERS=20]
#   RSS_LIMIT_MIB (default 512) is the bound each step must stay under.
set -euo pipefail
memopt=$1 gen=$2 work=$3 layers=${4:-20}
limit=${RSS_LIMIT_MIB:-512}
rm -rf "$work"
mkdir -p "$work/src" "$work/out" "$work/inline"
trap 'rm -rf "$work"' EXIT

"$gen" "$work/src" --layers "$layers" >/dev/null
"$gen" "$work/inline" --layers "$layers" --inline >/dev/null
weights=$(stat -c %s "$work/src/weights.bin")
inline_size=$(stat -c %s "$work/inline/forward_inline.onnx")

status=0
rows=()
step() {  # step NAME memopt-args...
  local name=$1
  shift
  local err=$work/step.err
  if ! NO_COLOR=1 "$memopt" -v "$@" >"$work/step.out" 2>"$err"; then
    echo "FAILED: memopt $*" >&2
    grep -v '^memopt: \(loading\|inferring\)' "$err" >&2 || true
    exit 1
  fi
  local line rss secs
  line=$(grep 'memopt: PASSED' "$err")
  rss=$(grep -o 'peak RSS [0-9.]*' <<<"$line" | grep -o '[0-9.]*$')
  secs=$(grep -o '| [0-9.]*s |' <<<"$line" | grep -o '[0-9.]*')
  local verdict=ok
  if awk -v r="$rss" -v l="$limit" 'BEGIN { exit !(r > l) }'; then verdict="OVER ${limit} MiB"; status=1; fi
  rows+=("$(printf '%-34s %8ss %10s MiB  %s' "$name" "$secs" "$rss" "$verdict")")
}

step "grad (forward -> training)" grad "$work/src/forward.onnx" -o "$work/src/training.onnx"
step "scan training" scan "$work/src/training.onnx" --dims batch=4096
step "plan --level 1" plan "$work/src/training.onnx" --level 1 --dims batch=4096 -o "$work/src/plan.json"
step "plan --budget 0.8" plan "$work/src/training.onnx" --budget 0.8 --dims batch=4096 -o "$work/src/budget.json"
step "apply (other folder: copies data)" apply "$work/src/training.onnx" --config "$work/src/plan.json" \
  --dims batch=4096 -o "$work/out/rewritten.onnx"
step "scan rewritten" scan "$work/out/rewritten.onnx" --dims batch=4096
step "scan forward, inline >2 GB protobuf" scan "$work/inline/forward_inline.onnx" --dims batch=4096
step "plan forward, inline >2 GB protobuf" plan "$work/inline/forward_inline.onnx" --level 1 --dims batch=4096 \
  -o "$work/inline/plan.json"

# The plan recomputes something, apply wrote valid external data: same size, still sparse.
grep -q '"' "$work/src/plan.json" || { echo "FAILED: the level-1 plan is empty" >&2; status=1; }
copied=$(stat -c %s "$work/out/weights.bin")
allocated_kib=$(du -k "$work/out/weights.bin" | cut -f1)
if [[ $copied != "$weights" ]]; then
  echo "FAILED: apply's copy of weights.bin has $copied bytes, expected $weights" >&2
  status=1
fi
if ((allocated_kib > 65536)); then
  echo "FAILED: apply's copy of weights.bin uses ${allocated_kib} KiB of disk: holes were filled" >&2
  status=1
fi

printf 'weights: %s bytes external (sparse file, %s KiB on disk after apply'"'"'s copy); inline model: %s bytes\n' \
  "$weights" "$allocated_kib" "$inline_size"
printf '%-34s %9s %14s  %s\n' step wall "peak RSS" result
printf '%s\n' "${rows[@]}"
exit $status
