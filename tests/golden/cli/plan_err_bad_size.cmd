plan @DATA@/ort_recompute/recompute_gelu.onnx --budget 12XB --dims input1_dim0=16,input1_dim1=784 -o @WORK@/mem_opt.json
