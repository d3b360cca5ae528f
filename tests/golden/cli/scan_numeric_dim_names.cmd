scan @SRC@/tests/data/dims/numeric_dim_names.onnx
