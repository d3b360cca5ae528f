grad @SRC@/tests/data/run/no_such_model.onnx -o @WORK@/out.onnx
