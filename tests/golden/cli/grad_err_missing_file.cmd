grad @SRC@/tests/data/bad/no_such_file.onnx -o @WORK@/train.onnx
