#!/usr/bin/env bash
# Creates the Python environment of the ONNX Runtime oracle tests (tests/ort_oracle):
# onnxruntime-training 1.19.2 (the last release on PyPI, CPU provider), onnx and numpy, in
# .venv-ort at the repository root (or $MEMOPT_ORT_VENV). The C++ build never needs it; without
# it the oracle tests report themselves skipped. CI runs this before ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${MEMOPT_ORT_VENV:-.venv-ort}
python=${PYTHON:-python3}
if ! "$python" -c "import venv, ensurepip" 2>/dev/null; then
  sudo=""
  [[ $(id -u) -ne 0 ]] && sudo="sudo"
  echo "memopt setup_ort_oracle: installing python3-venv" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends python3-venv >/dev/null
fi
[[ -x $venv/bin/python ]] || "$python" -m venv "$venv"
"$venv/bin/pip" install -q --disable-pip-version-check onnxruntime-training==1.19.2 onnx numpy
"$venv/bin/python" -c "import onnxruntime, onnx; print('memopt setup_ort_oracle: onnxruntime', onnxruntime.__version__, 'onnx', onnx.__version__)" >&2
