scan @SRC@/tests/data/run/sym_relu.onnx -o @WORK@
