#!/usr/bin/env bash
# Exports every fixture model again and checks what memopt makes of it, where the exporters' venvs
# exist (each part is skipped with a message otherwise; the whole test reports itself skipped, 77,
# when neither is there, as in CI):
#   * the current PyTorch (torch 2.15, transformers 5.x: scripts/export_torch_current.py), with the
#     Python at MEMOPT_TORCH_CURRENT_PYTHON or SRC/.venv-torch-current;
#   * PyTorch 2.4's exporters, TorchScript above all (scripts/export_torch_exports.py), with the
#     Python at MEMOPT_TORCH24_PYTHON or SRC/.venv-torch.
# Each export: every PyTorch parameter's gradient by name against autograd
# (tests/torch_current/measure.py, with its documented exceptions), and the CLI pipeline
# (check_torch_exports.sh: grad, run, plan --level 1 and --budget 0.7 with apply --verify, scan's
# peak == run's). The committed fixtures (tests/data/torch_current, torch_exports) are a subset of
# these, checked without Python by the other tests.
# Usage: fresh_exports.sh MEMOPT SRC WORK
set -u
memopt=$1 src=$2 work=$3
current=${MEMOPT_TORCH_CURRENT_PYTHON:-$src/.venv-torch-current/bin/python}
torch24=${MEMOPT_TORCH24_PYTHON:-$src/.venv-torch/bin/python}
usable() { [[ -x $1 ]] && "$1" -c "import torch, transformers, onnx, numpy" 2>/dev/null; }
rm -rf "$work"
mkdir -p "$work"
ran=0 failed=0
check() {  # check LABEL PYTHON SCRIPT: export with SCRIPT, then measure and run the pipeline
  local label=$1 python=$2 script=$3
  ran=1
  if ! "$python" "$src/scripts/$script" --out "$work/$label" >"$work/$label.log" 2>&1; then
    echo "FAIL $label: $script: $(tail -n 3 "$work/$label.log")"
    failed=1
    return
  fi
  "$python" "$src/tests/torch_current/measure.py" "$memopt" "$work/$label" "$work/${label}_measure" || failed=1
  CHECK_FIXTURES="$work/$label" bash "$src/tests/torch_exports/check_torch_exports.sh" "$memopt" "$src" \
    "$work/${label}_check" torch_current || failed=1
}
if usable "$current"; then
  check current "$current" export_torch_current.py
else
  echo "skipped: the current PyTorch's exports (no Python with torch, transformers and onnx at $current)"
fi
if usable "$torch24"; then
  check torch24 "$torch24" export_torch_exports.py
else
  echo "skipped: PyTorch 2.4's exports (no Python with torch, transformers and onnx at $torch24)"
fi
[[ $ran -eq 1 ]] || exit 77
exit $failed
