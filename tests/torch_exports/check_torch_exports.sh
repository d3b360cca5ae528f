#!/usr/bin/env bash
# The CLI on every fixture of tests/data/torch_exports (scripts/export_torch_exports.py): grad, run,
# plan --level 1 and apply --verify must succeed (the gradients themselves are compared with
# autograd in lib/grad/grad_fixture_test.cc). With a Python that has onnx and onnxruntime-training
# (.venv-ort, scripts/setup_ort_oracle.sh), check_torch_exports.py also checks the written models
# with the ONNX checker and ONNX Runtime, and that scan sees the same candidates in a dynamo export
# as in the same model inlined by onnx.inliner; without it that part is reported as skipped.
# With FOLDER torch_current (scripts/export_torch_current.py, the current PyTorch's exporter), each
# fixture also plans at --budget 0.7 and applies that with --verify, and `run`'s measured peak of
# the training graph must equal `scan`'s estimate (unless only NonZero's data-dependent counts keep
# it symbolic), with no unk__ dim left at the fixture's input sizes; a default export whose BatchNorm the exporter folded into a Conv must be refused.
# Usage: [CHECK_FIXTURES=DIR] check_torch_exports.sh MEMOPT SRC_DIR WORK_DIR [FOLDER]
set -u
memopt=$1 src=$2 work=$3 folder=${4:-torch_exports}
fixtures=${CHECK_FIXTURES:-$src/tests/data/$folder}  # tests/torch_current/fresh_exports.sh passes its own
minimum=12
[[ $folder == torch_current ]] && minimum=9
rm -rf "$work"
mkdir -p "$work"
trap 'rm -rf "$work"' EXIT
failed=0
count=0
for dir in "$fixtures"/*/; do
  name=$(basename "$dir")
  [[ -f $dir/manifest.json ]] || continue
  count=$((count + 1))
  w=$work/$name
  mkdir -p "$w"
  dims=$(sed -n 's/^  "dims": "\(.*\)",$/\1/p' "$dir/manifest.json")
  step() {  # step LABEL COMMAND...: runs it, reports a failure with its stderr
    local label=$1 rc=0
    shift
    "$@" >"$w/$label.out" 2>"$w/$label.err" || rc=$?
    if [[ $rc -ne 0 ]]; then
      echo "FAIL $name: $label (exit $rc): $(tail -n 2 "$w/$label.err")"
      failed=1
      return 1
    fi
  }
  # A default export of a model with training-mode BatchNorm: the exporter folded it into the
  # Conv weights, and grad must say so (tests/torch_current/measure.py's EXPECTED).
  if [[ $folder == torch_current && $name == *_default ]] &&
     ! "$memopt" grad "$dir/model.onnx" -o "$w/train.onnx" >"$w/grad.out" 2>"$w/grad.err"; then
    if grep -q "folded the training-mode batch norm" "$w/grad.err"; then
      echo "ok $name: grad refuses it (BatchNorm folded into a Conv by the exporter's optimizer)"
    else
      echo "FAIL $name: grad: $(tail -n 2 "$w/grad.err")"
      failed=1
    fi
    continue
  fi
  step grad "$memopt" grad "$dir/model.onnx" -o "$w/train.onnx" || continue
  step run "$memopt" run "$w/train.onnx" --inputs "$dir/inputs" || continue
  step plan "$memopt" plan "$w/train.onnx" --level 1 -o "$w/plan.json" ${dims:+--dims "$dims"} || continue
  step apply "$memopt" apply "$w/train.onnx" --config "$w/plan.json" -o "$w/opt.onnx" --verify \
    ${dims:+--dims "$dims"} || continue
  grep -q "bit-identical" "$w/apply.out" || { echo "FAIL $name: apply --verify did not report bit-identical outputs"; failed=1; }
  if [[ $folder == torch_current ]]; then
    # At these tiny sizes the weights may leave 0.7 out of reach: exit 3 says so, and is no failure.
    "$memopt" plan "$w/train.onnx" --budget 0.7 -o "$w/budget.json" ${dims:+--dims "$dims"} >"$w/budget.out" 2>"$w/budget.err"
    rc=$?
    if [[ $rc -eq 0 ]]; then
      step apply_budget "$memopt" apply "$w/train.onnx" --config "$w/budget.json" -o "$w/budget.onnx" --verify \
        ${dims:+--dims "$dims"} || continue
      grep -q "bit-identical" "$w/apply_budget.out" || { echo "FAIL $name: the budget plan's --verify is not bit-identical"; failed=1; }
    elif [[ $rc -ne 3 ]]; then
      echo "FAIL $name: plan --budget 0.7 (exit $rc): $(tail -n 1 "$w/budget.err")"
      failed=1
      continue
    fi
    step scan "$memopt" scan "$w/train.onnx" --format json ${dims:+--dims "$dims"} || continue
    if grep -q "unk__" "$w/scan.err"; then  # every size must resolve at the fixture's input sizes
      echo "FAIL $name: scan at --dims ${dims:-(none)} leaves dims unresolved: $(grep -o 'dims unk__[^;]*' "$w/scan.err" | head -c 200)"
      failed=1
    fi
    # The peak object's "bytes" (its other keys, sorted around it, end in _bytes and have no quote before "bytes").
    scan_peak=$(tr -d ' \n' <"$w/scan.out" | sed -n 's/.*"peak":{[^}]*"bytes":\([0-9]*\).*/\1/p')
    measured=$(sed -n 's/^measured peak: .*(\([0-9,]*\) bytes)$/\1/p' "$w/run.out" | tr -d ,)
    if [[ -z $scan_peak ]] && grep -q "nonzero__ dims count" "$w/scan.err" &&
       ! grep -o "dims [^;]* are unbound" "$w/scan.err" | grep -q "unk__"; then
      echo "note $name: the peak depends on what NonZero finds in the data (nonzero__ dims); not compared"
    elif [[ -z $measured || -z $scan_peak || $measured != "$scan_peak" ]]; then
      echo "FAIL $name: run's measured peak ${measured:-?} != scan's estimate ${scan_peak:-?}"
      failed=1
    fi
  fi
  echo "ok $name: $(grep -o '[0-9]* outputs bit-identical' "$w/apply.out")"
done
if [[ $count -eq 0 && $folder == torch_current ]]; then
  echo "skipped: no fixtures in $fixtures"
  exit 77
fi
if [[ $count -lt $minimum ]]; then
  echo "FAIL: $count fixtures in $fixtures ($minimum expected)"
  exit 1
fi
[[ $folder == torch_exports ]] || exit $failed
source "$src/tests/ort_oracle/ort_python.sh"
if python=$(ort_python "$src" onnx.inliner); then
  "$python" "$src/tests/torch_exports/check_torch_exports.py" "$memopt" "$fixtures" "$work" || failed=1
else
  echo "skipped: the ONNX checker, ONNX Runtime and onnx.inliner checks (no Python with onnx, onnx.inliner and onnxruntime at ${MEMOPT_ORT_PYTHON:-$src/.venv-ort/bin/python}; scripts/setup_ort_oracle.sh makes one)"
fi
exit $failed
