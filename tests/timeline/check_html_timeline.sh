#!/usr/bin/env bash
# Renders memopt's HTML memory timeline and the plan --sweep plot in headless Chromium and checks
# that each page loads without console errors and draws the expected number of series (the page writes
# data-render, data-series-count and data-errors on <body>; --dump-dom shows them).
# Usage: check_html_timeline.sh MEMOPT SOURCE_DIR DATA_DIR WORK_DIR
# Exit 77 (ctest: skipped) when no Chromium is installed (Debian: apt-get install chromium).
set -u
memopt=$1 src_dir=$2 data_dir=$3 work_dir=$4
browser=""
for b in chromium chromium-browser google-chrome; do
  if command -v "$b" >/dev/null 2>&1; then browser=$b; break; fi
done
if [[ -z $browser ]]; then
  echo "skipped: no chromium found (apt-get install chromium)"
  exit 77
fi
mkdir -p "$work_dir"
status=0

# render NAME EXPECTED_SERIES MEMOPT_ARGS...: writes WORK/NAME.html with memopt and checks it
# (through --timeline, or the option in $page_option: --plot for plan --sweep).
render() {
  local name=$1 expected=$2
  shift 2
  local html=$work_dir/$name.html
  if ! NO_COLOR=1 "$memopt" "$@" "${page_option:---timeline}" "$html" >"$work_dir/$name.stdout" 2>"$work_dir/$name.stderr"; then
    echo "FAIL $name: memopt exited non-zero:"; cat "$work_dir/$name.stderr"; status=1; return
  fi
  local profile
  profile=$(mktemp -d)
  timeout 120 "$browser" --headless --disable-gpu --no-sandbox --no-first-run --user-data-dir="$profile" \
    --enable-logging=stderr --v=0 --virtual-time-budget=5000 --dump-dom "file://$html" \
    >"$work_dir/$name.dom" 2>"$work_dir/$name.chromium.log"
  local rc=$?
  rm -rf "$profile"
  if [[ $rc != 0 ]]; then
    echo "FAIL $name: chromium exited with $rc"; tail -n 20 "$work_dir/$name.chromium.log"; status=1; return
  fi
  local body
  body=$(grep -o '<body[^>]*>' "$work_dir/$name.dom" | head -n 1)
  local ok=1
  [[ $body == *'data-render="ok"'* ]] || { echo "FAIL $name: page did not finish drawing: $body"; ok=0; }
  [[ $body == *"data-series-count=\"$expected\""* ]] || { echo "FAIL $name: expected $expected series: $body"; ok=0; }
  [[ $body == *'data-errors="0"'* ]] || { echo "FAIL $name: script errors: $body"; ok=0; }
  if grep -E ':CONSOLE|Uncaught' "$work_dir/$name.chromium.log"; then
    echo "FAIL $name: console messages (above)"; ok=0
  fi
  if grep -Eiq '(src|href)="(https?:)?//' "$html"; then
    echo "FAIL $name: the page references a network resource"; ok=0
  fi
  if [[ $ok == 1 ]]; then
    echo "ok   $name: $(wc -c <"$html") bytes, $expected series, no console errors"
  else
    status=1
  fi
}

# A forward-only model from the source tree (no boundary: one phase).
render tiny 4 scan "$src_dir/tests/data/tiny_external/model.onnx"
# The plan --sweep frontier: the budget plans plus ORT level 1, level 2 and per-block checkpointing.
page_option=--plot render gpt2_tiny_sweep 4 plan "$src_dir/tests/data/plan/gpt2_tiny_2layer.onnx" \
  --dims batch=4,seq_len=64 --sweep --sweep-points 5
if [[ -d $data_dir ]]; then
  render gelu 4 scan "$data_dir/ort_recompute/recompute_gelu.onnx" --dims input1_dim0=16,input1_dim1=784
  render bloom 4 scan "$data_dir/ort_recompute/3layer_bloom_optimized_training.onnx"
  # plan overlays the rewritten step: one more series.
  if "$memopt" plan --help 2>/dev/null | grep -q -- --timeline; then
    render bloom_plan 5 plan "$data_dir/ort_recompute/3layer_bloom_optimized_training.onnx"
  fi
else
  echo "note: shared test data not found at $data_dir; checked the source-tree model only"
fi
exit $status
