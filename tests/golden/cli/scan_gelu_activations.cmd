scan @DATA@/ort_recompute/recompute_gelu.onnx --dims input1_dim0=16,input1_dim1=784 --activations
