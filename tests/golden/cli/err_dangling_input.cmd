scan @SRC@/tests/data/bad/dangling_input.onnx
