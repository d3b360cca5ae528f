scan @SRC@/tests/data/bad/missing_external.onnx
