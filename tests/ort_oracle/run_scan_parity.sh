#!/usr/bin/env bash
# ctest wrapper of check_scan_parity.py: memopt's scan tables against ONNX Runtime 1.19.2's
# analysis on ORT's recompute test graphs (shared data, when present), ORTModule's training graphs
# of tests/data/ortmodule_graphs, and the training graphs `memopt grad` builds from the PyTorch
# exports in tests/data (both exporters) and the grad fixtures. Needs a Python with
# onnxruntime-training and onnx (ort_python.sh); skips (exit 77) without one.
# Usage: run_scan_parity.sh MEMOPT SRC_DIR DATA_DIR WORK_DIR
set -u
memopt=$1 src=$2 data=$3 work=$4
source "$src/tests/ort_oracle/ort_python.sh"
require_ort_python "$src"
rm -rf "$work"
mkdir -p "$work"
trap 'rm -rf "$work"' EXIT
models=()
for dir in "$src"/tests/data/torch_exports/*/ "$src"/tests/data/grad_fixtures/*/; do
  [[ -f $dir/manifest.json ]] || continue
  name=$(basename "$dir")
  "$memopt" grad "$dir/model.onnx" -o "$work/${name}_train.onnx" >/dev/null 2>&1 || {
    echo "FAIL: memopt grad $dir/model.onnx"
    exit 1
  }
  models+=("$work/${name}_train.onnx=$dir/inputs")
done
# ORTModule's own training graphs, with the configs it applied (scripts/export_ortmodule_graphs.py).
for dir in "$src"/tests/data/ortmodule_graphs/*/; do
  [[ -f $dir/optimized_training.onnx ]] && models+=("$dir/optimized_training.onnx")
done
for graph in recompute_gelu recompute_tile 3layer_bloom_optimized_training; do
  [[ -f $data/ort_recompute/$graph.onnx ]] && models+=("$data/ort_recompute/$graph.onnx")
done
"$python" "$src/tests/ort_oracle/check_scan_parity.py" "$memopt" "$work" "${models[@]}"
