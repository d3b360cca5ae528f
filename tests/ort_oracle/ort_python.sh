# Sourced by the ctest wrappers that check memopt against ONNX Runtime: finds the Python with
# onnxruntime-training and onnx that scripts/setup_ort_oracle.sh makes (SRC/.venv-ort), or the one
# MEMOPT_ORT_PYTHON names.

# ort_python SRC [MODULE ...]: prints that Python's path when it imports onnxruntime, onnx and the
# given modules; fails (printing nothing) otherwise.
ort_python() {
  local src=$1
  shift
  local python=${MEMOPT_ORT_PYTHON:-$src/.venv-ort/bin/python}
  local imports="import onnxruntime, onnx"
  for module in "$@"; do imports+=", $module"; done
  [[ -x $python ]] && "$python" -c "$imports" 2>/dev/null && echo "$python"
}

# require_ort_python SRC: sets `python`, or exits 77 (ctest: skipped) with the reason.
require_ort_python() {
  python=$(ort_python "$1") && return 0
  echo "skipped: no Python with onnxruntime-training and onnx at ${MEMOPT_ORT_PYTHON:-$1/.venv-ort/bin/python}" \
       "(run scripts/setup_ort_oracle.sh)"
  exit 77
}
