#!/usr/bin/env bash
# CI memory gate: fail the build when a training graph's peak memory grows.
#
#   scripts/ci_memory_gate.sh MODEL.onnx [DIMS] [BASELINE.json] [TOLERANCE_PCT] [LIMIT]
#
#   MODEL.onnx      the training graph your export step produces
#   DIMS            the shapes to judge it at, e.g. batch=8,seq_len=512; empty or "-" for a model
#                   without symbolic dims (e.g. one exported at fixed shapes)
#   BASELINE.json   an earlier report (`memopt scan|plan --format json`), e.g. kept in the repo or
#                   downloaded from the main branch's last run; skipped when absent. It is read
#                   before anything is written, so it may be a report of the last run in OUT_DIR.
#   TOLERANCE_PCT   allowed growth over the baseline, in percent (default 2)
#   LIMIT           hard ceiling for the planned peak, e.g. 70GiB (default: none)
#
# Environment: OUT_DIR, the folder for the outputs (default ./memopt-gate, created); MEMOPT, the
# memopt binary (default: memopt on PATH, else build/tools/memopt beside this script).
#
# Outputs, all in OUT_DIR (publish them as CI artifacts; the next run can use one as its baseline):
#   memopt-scan.json   the unoptimized peak (`memopt scan`), for the record
#   memopt-plan.json   the gated report of ORT's level-1 recompute plan (`memopt plan`)
#   mem_opt.json       that plan's config, for the training job (ORTMODULE_MEMORY_OPT_CONFIG)
#
# Exit status: 0 when every gate passes, 3 when a gate fails (the message says which and by how
# much), 1/2 for errors.
#
# Example (GitHub Actions step):
#   - run: scripts/ci_memory_gate.sh build/model_training.onnx batch=8,seq_len=512 \
#            ci/memory_baseline.json 2 70GiB
set -euo pipefail

usage="usage: ci_memory_gate.sh MODEL.onnx [DIMS|-] [BASELINE.json] [TOLERANCE_PCT] [LIMIT]"
model=${1:?$usage}
dims=${2:-}
baseline=${3:-}
tolerance=${4:-2}
limit=${5:-}
out_dir=${OUT_DIR:-memopt-gate}
memopt=${MEMOPT:-memopt}
if ! command -v "$memopt" >/dev/null 2>&1; then
  here=$(cd "$(dirname "$0")/.." && pwd)
  memopt=$here/build/tools/memopt
fi
[[ $dims == - ]] && dims=

# The baseline first: it may be one of the files this run is about to write.
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
gates=()
if [[ -n $baseline && -f $baseline ]]; then
  cp -- "$baseline" "$scratch/baseline.json"
  gates+=(--baseline "$scratch/baseline.json" --tolerance "$tolerance")
elif [[ -n $baseline ]]; then
  echo "ci_memory_gate: baseline report $baseline not found; only --fail-above is checked" >&2
else
  echo "ci_memory_gate: no baseline report; only --fail-above is checked" >&2
fi
dims_args=()
if [[ -n $dims ]]; then dims_args=(--dims "$dims"); fi

mkdir -p -- "$out_dir"
echo "ci_memory_gate: writing memopt-scan.json, memopt-plan.json and mem_opt.json to $out_dir/" >&2

# 1. The unoptimized peak (what the step needs without recompute), for the record.
"$memopt" scan "$model" "${dims_args[@]}" --format json -o "$out_dir/memopt-scan.json"

# 2. The peak with ORT's layer-wise recompute (ORTMODULE_MEMORY_OPT_LEVEL=1), gated: a hard
#    ceiling and the growth over the baseline. The config is what the training job should use.
args=(plan "$model" --level 1 "${dims_args[@]}" --format json -o "$out_dir/mem_opt.json" "${gates[@]}")
if [[ -n $limit ]]; then args+=(--fail-above "$limit"); fi
status=0
"$memopt" "${args[@]}" >"$out_dir/memopt-plan.json" || status=$?
if [[ $status == 0 ]]; then
  echo "ci_memory_gate: memory gates passed (report: $out_dir/memopt-plan.json, config: $out_dir/mem_opt.json)" >&2
fi
exit $status
