#!/usr/bin/env bash
# The CLI on every fixture of tests/data/torch_exports (scripts/export_torch_exports.py): grad, run,
# plan --level 1 and apply --verify must succeed (the gradients themselves are compared with
# autograd in lib/grad/grad_fixture_test.cc). With a Python that has onnx and onnxruntime-training
# (.venv-ort, scripts/setup_ort_oracle.sh), check_torch_exports.py also checks the written models
# with the ONNX checker and ONNX Runtime, and that scan sees the same candidates in a dynamo export
# as in the same model inlined by onnx.inliner; without it that part is reported as skipped.
# Usage: check_torch_exports.sh MEMOPT SRC_DIR WORK_DIR
set -u
memopt=$1 src=$2 work=$3
fixtures=$src/tests/data/torch_exports
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
    local label=$1
    shift
    if ! "$@" >"$w/$label.out" 2>"$w/$label.err"; then
      echo "FAIL $name: $label (exit $?): $(tail -n 2 "$w/$label.err")"
      failed=1
      return 1
    fi
  }
  step grad "$memopt" grad "$dir/model.onnx" -o "$w/train.onnx" || continue
  step run "$memopt" run "$w/train.onnx" --inputs "$dir/inputs" || continue
  step plan "$memopt" plan "$w/train.onnx" --level 1 -o "$w/plan.json" ${dims:+--dims "$dims"} || continue
  step apply "$memopt" apply "$w/train.onnx" --config "$w/plan.json" -o "$w/opt.onnx" --verify \
    ${dims:+--dims "$dims"} || continue
  grep -q "bit-identical" "$w/apply.out" || { echo "FAIL $name: apply --verify did not report bit-identical outputs"; failed=1; }
  echo "ok $name: $(grep -o '[0-9]* outputs bit-identical' "$w/apply.out")"
done
if [[ $count -lt 12 ]]; then
  echo "FAIL: $count fixtures in $fixtures (12 expected)"
  exit 1
fi
source "$src/tests/ort_oracle/ort_python.sh"
if python=$(ort_python "$src" onnx.inliner); then
  "$python" "$src/tests/torch_exports/check_torch_exports.py" "$memopt" "$fixtures" "$work" || failed=1
else
  echo "skipped: the ONNX checker, ONNX Runtime and onnx.inliner checks (no Python with onnx, onnx.inliner and onnxruntime at ${MEMOPT_ORT_PYTHON:-$src/.venv-ort/bin/python}; scripts/setup_ort_oracle.sh makes one)"
fi
exit $failed
