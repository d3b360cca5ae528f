scan @SRC@/tests/data/tiny_external/model.onnx --timeline -
