scan @SRC@/tests/data/versions/opset99.onnx
