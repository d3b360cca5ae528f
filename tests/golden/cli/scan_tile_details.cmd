scan @DATA@/ort_recompute/recompute_tile.onnx --details
