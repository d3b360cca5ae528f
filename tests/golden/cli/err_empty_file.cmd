scan @SRC@/tests/data/bad/empty.onnx
