#!/usr/bin/env bash
# ctest wrapper of check_target_ort.py: finds a Python with onnxruntime-training 1.19.2 (and onnx,
# for the synthetic graph) or skips (exit 77) with the reason. scripts/setup_ort_oracle.sh makes
# that Python (.venv-ort); MEMOPT_ORT_PYTHON overrides it.
# Usage: run_target_ort.sh MEMOPT SRC_DIR DATA_DIR WORK_DIR
set -u
memopt=$1 src=$2 data=$3 work=$4
source "$src/tests/ort_oracle/ort_python.sh"
require_ort_python "$src"
version=$("$python" -c "import onnxruntime; print(onnxruntime.__version__)")
[[ $version == 1.19.2 ]] || echo "note: onnxruntime $version, the reference is 1.19.2"
rm -rf "$work"
mkdir -p "$work"
trap 'rm -rf "$work"' EXIT
# Graphs: a synthetic 2-layer float32 transformer (float16 would make ORT's CPU session insert
# Casts), the tiny GPT-2 fixture through memopt grad, and ORT's BLOOM graph when the data is here.
"$python" "$src/scripts/gen_transformer_training.py" --layers 2 --dtype float --out "$work/synthetic_2layer.onnx" \
  >/dev/null || exit 1
"$memopt" grad "$src/tests/data/grad_fixtures/gpt2_tiny/model.onnx" -o "$work/gpt2_tiny_train.onnx" >/dev/null || exit 1
models=("$work/synthetic_2layer.onnx:batch=8,seq_len=1024" "$work/gpt2_tiny_train.onnx:")
bloom=$data/ort_recompute/3layer_bloom_optimized_training.onnx
if [[ -f $bloom ]]; then
  models+=("$bloom:inputs_attention_mask_dim0=8,inputs_attention_mask_dim1=512,inputs_input_ids_dim0=8,inputs_labels_dim0=8,inputs_labels_dim1=512")
fi
"$python" "$src/tests/ort_oracle/check_target_ort.py" "$memopt" "$work" "${models[@]}"
