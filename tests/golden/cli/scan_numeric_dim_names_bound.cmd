scan @SRC@/tests/data/dims/numeric_dim_names.onnx --dims 2=4,8=128
