scan @SRC@/tests/data/dims/range_unresolved.onnx
