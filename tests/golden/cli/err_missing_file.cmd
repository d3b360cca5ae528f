scan @SRC@/tests/data/bad/no_such_file.onnx
