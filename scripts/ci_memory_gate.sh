#!/usr/bin/env bash
# CI memory gate: fail the build when a training graph's peak memory grows.
#
#   scripts/ci_memory_gate.sh MODEL.onnx DIMS [BASELINE.json] [TOLERANCE_PCT] [LIMIT]
#
#   MODEL.onnx      the training graph your export step produces
#   DIMS            the shapes to judge it at, e.g. batch=8,seq_len=512
#   BASELINE.json   an earlier report (`memopt scan|plan --format json`), e.g. kept in the repo or
#                   downloaded from the main branch's last run; skipped when absent
#   TOLERANCE_PCT   allowed growth over the baseline, in percent (default 2)
#   LIMIT           hard ceiling for the planned peak, e.g. 70GiB (default: none)
#
# Exit status: 0 when every gate passes, 3 when a gate fails (the message says which and by how
# much), 1/2 for errors. The new reports are written to memopt-scan.json and memopt-plan.json
# (publish them as CI artifacts; the next run can use one as its baseline).
#
# Example (GitHub Actions step):
#   - run: scripts/ci_memory_gate.sh build/model_training.onnx batch=8,seq_len=512 \
#            ci/memory_baseline.json 2 70GiB
set -euo pipefail

model=${1:?usage: ci_memory_gate.sh MODEL.onnx DIMS [BASELINE.json] [TOLERANCE_PCT] [LIMIT]}
dims=${2:?usage: ci_memory_gate.sh MODEL.onnx DIMS [BASELINE.json] [TOLERANCE_PCT] [LIMIT]}
baseline=${3:-}
tolerance=${4:-2}
limit=${5:-}
memopt=${MEMOPT:-memopt}
if ! command -v "$memopt" >/dev/null 2>&1; then
  here=$(cd "$(dirname "$0")/.." && pwd)
  memopt=$here/build/tools/memopt
fi

gates=()
if [[ -n $baseline && -f $baseline ]]; then
  gates+=(--baseline "$baseline" --tolerance "$tolerance")
else
  echo "ci_memory_gate: no baseline report; only --fail-above is checked" >&2
fi

# 1. The unoptimized peak (what the step needs without recompute), for the record.
"$memopt" scan "$model" --dims "$dims" --format json -o memopt-scan.json

# 2. The peak with ORT's layer-wise recompute (ORTMODULE_MEMORY_OPT_LEVEL=1), gated: a hard
#    ceiling and the growth over the baseline. The config is what the training job should use.
args=(plan "$model" --level 1 --dims "$dims" --format json -o mem_opt.json "${gates[@]}")
if [[ -n $limit ]]; then args+=(--fail-above "$limit"); fi
status=0
"$memopt" "${args[@]}" >memopt-plan.json || status=$?
if [[ $status == 0 ]]; then
  echo "ci_memory_gate: memory gates passed (report: memopt-plan.json, config: mem_opt.json)" >&2
fi
exit $status
