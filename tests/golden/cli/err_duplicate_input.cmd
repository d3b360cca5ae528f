scan @SRC@/tests/data/bad/duplicate_input.onnx
