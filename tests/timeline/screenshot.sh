#!/usr/bin/env bash
# Takes a PNG screenshot of memopt's HTML memory timeline for review (headless Chromium).
# Usage: tests/timeline/screenshot.sh [-b BUILD_DIR] OUT.png [memopt arguments ...]
#   default arguments: scan ../shared/data/ort_recompute/3layer_bloom_optimized_training.onnx
#   e.g. tests/timeline/screenshot.sh /tmp/plan.png plan model.onnx --dims batch=8 --budget 0.7
# The page is written next to the PNG (OUT.html). Needs chromium (Debian: apt-get install chromium).
set -euo pipefail
src_dir=$(cd "$(dirname "$0")/../.." && pwd)
build_dir=$src_dir/build
if [[ ${1:-} == -b ]]; then build_dir=$2; shift 2; fi
if [[ $# -lt 1 ]]; then
  sed -n '2,6p' "$0" >&2
  exit 2
fi
out=$1
shift
if [[ $# -eq 0 ]]; then
  set -- scan "$src_dir/../shared/data/ort_recompute/3layer_bloom_optimized_training.onnx"
fi
browser=""
for b in chromium chromium-browser google-chrome; do
  if command -v "$b" >/dev/null 2>&1; then browser=$b; break; fi
done
[[ -n $browser ]] || { echo "screenshot.sh: no chromium found (apt-get install chromium)" >&2; exit 1; }
html=${out%.png}.html
"$build_dir/tools/memopt" "$@" --timeline "$html" >/dev/null
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
out_abs=$(cd "$(dirname "$out")" && pwd)/$(basename "$out")
"$browser" --headless --disable-gpu --no-sandbox --no-first-run --user-data-dir="$profile" --hide-scrollbars \
  --window-size=1280,1000 --virtual-time-budget=5000 --screenshot="$out_abs" "file://$(cd "$(dirname "$html")" && pwd)/$(basename "$html")" \
  >/dev/null 2>&1
echo "screenshot.sh: wrote $out (page: $html)"
