plan @DATA@/ort_recompute/recompute_gelu.onnx --level 2 --dims input1_dim0=16,input1_dim1=784 --format json -o @WORK@/mem_opt.json
