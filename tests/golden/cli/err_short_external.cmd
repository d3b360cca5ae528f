scan @SRC@/tests/data/bad/short_external.onnx
