scan @SRC@/tests/data/bad/random.onnx
