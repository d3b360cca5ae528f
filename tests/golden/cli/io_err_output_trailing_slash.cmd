plan @SRC@/tests/data/run/sym_relu.onnx --level 1 -o @WORK@/new/
