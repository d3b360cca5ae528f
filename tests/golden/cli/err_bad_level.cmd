scan @DATA@/ort_recompute/recompute_gelu.onnx --level 7
