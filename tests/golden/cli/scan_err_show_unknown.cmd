scan @DATA@/ort_recompute/recompute_gelu.onnx --show Nope+ --dot -
