#!/usr/bin/env bash
# Ctrl-C during long work leaves no output and no temporary behind, and exits 130: memopt run
# --save-outputs and memopt bench on the 3-layer BLOOM graph (a run takes seconds), interrupted
# with SIGINT after one second.
# Usage: check_interrupt.sh MEMOPT DATA_DIR WORK_DIR   (exit 77 = skipped without the shared data)
set -u
memopt=$1 data_dir=$2 work_dir=$3
model=$data_dir/ort_recompute/3layer_bloom_optimized_training.onnx
dims=inputs_input_ids_dim0=2,inputs_attention_mask_dim1=8,inputs_attention_mask_dim0=2,inputs_labels_dim0=2,inputs_labels_dim1=8
if [[ ! -f $model ]]; then
  echo "skipped: shared test data not found at $data_dir"
  exit 77
fi
status=0
check() {
  local name=$1
  shift
  local out=$work_dir/$name
  rm -rf "$out"
  mkdir -p "$out/outputs"
  "$memopt" "$@" >"$out/stdout" 2>"$out/stderr" &
  local pid=$!
  sleep 1
  kill -INT "$pid"
  wait "$pid"
  local rc=$?
  local left
  left=$(find "$out/outputs" -mindepth 1 | wc -l)
  if [[ $rc != 130 ]]; then echo "FAIL $name: exit $rc, expected 130"; cat "$out/stderr"; status=1; return; fi
  if ! grep -q "memopt: interrupted" "$out/stderr"; then echo "FAIL $name: no interrupt message"; status=1; return; fi
  if [[ $left != 0 ]]; then echo "FAIL $name: $left files left in outputs/"; ls -la "$out/outputs"; status=1; return; fi
  echo "ok   $name: exit 130, nothing written"
}
check run run "$model" --dims "$dims" --save-outputs "$work_dir/run/outputs"
check bench bench "$model" --device cpu --dims "$dims" --iters 5
exit $status
