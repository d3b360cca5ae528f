#!/usr/bin/env bash
# memopt's CPU executor against ONNX Runtime 1.19.2 (CPU provider) and PyTorch eager on the same
# models and inputs, in one table of ratios (scripts/bench_exec.py; docs/benchmarks.md).
#   scripts/bench_exec.sh [bench_exec.py options]     e.g. --threads 1,2 --cases gpt2,cnn
# Uses $PYTHON when it has onnxruntime, torch, onnx and numpy; otherwise makes the venv
# ${MEMOPT_BENCH_VENV:-.venv-bench} with pip (onnxruntime-training 1.19.2, torch 2.4.1 CPU).
# Builds nothing: run it on a Release build (build/tools/memopt, or --memopt PATH).
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-python3}
if ! "$python" -c "import onnxruntime, torch, onnx, numpy" 2>/dev/null; then
  venv=${MEMOPT_BENCH_VENV:-.venv-bench}
  if [[ ! -x $venv/bin/python ]]; then
    echo "memopt bench_exec: creating $venv (onnxruntime-training, torch CPU, onnx, numpy)" >&2
    "$python" -m venv "$venv"
  fi
  "$venv/bin/pip" install -q --disable-pip-version-check onnxruntime-training==1.19.2 onnx numpy
  "$venv/bin/pip" install -q --disable-pip-version-check torch==2.4.1 --index-url https://download.pytorch.org/whl/cpu
  python=$venv/bin/python
fi
exec "$python" scripts/bench_exec.py "$@"
