apply @DATA@/ort_recompute/recompute_gelu.onnx --config @SRC@/tests/data/configs/gelu.json -o @SRC@/README.md/out.onnx
