plan @DATA@/ort_recompute/recompute_gelu.onnx --level 1 --dims input1_dim0=16,input1_dim1=784 -o @WORK@/mem_opt.json --timeline -
