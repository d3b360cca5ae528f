scan @DATA@/ort_recompute/recompute_gelu.onnx --dims input1_dim0=64,input1_dim1=784 --baseline @SRC@/tests/data/configs/gelu_scan_baseline.json --tolerance 5
