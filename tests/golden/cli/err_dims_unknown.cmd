scan @DATA@/ort_recompute/recompute_gelu.onnx --dims input1_dim=8
