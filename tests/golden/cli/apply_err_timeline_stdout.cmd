apply @DATA@/ort_recompute/recompute_gelu.onnx --config @SRC@/tests/data/configs/gelu.json --dims input1_dim0=16,input1_dim1=784 -o @WORK@/out.onnx --timeline -
