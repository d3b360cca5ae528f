scan @DATA@/ort_recompute/3layer_bloom_optimized_training.onnx --details
