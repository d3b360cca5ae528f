apply @DATA@/ort_recompute/recompute_gelu.onnx --config @SRC@/tests/data/configs/gelu.json -o /proc/memopt_out.onnx
