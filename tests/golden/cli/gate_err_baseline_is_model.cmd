scan @SRC@/tests/data/run/sym_relu.onnx --baseline @SRC@/tests/data/run/sym_relu.onnx
