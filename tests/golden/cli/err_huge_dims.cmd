scan @SRC@/tests/data/bad/huge_dims.onnx
