scan @SRC@/tests/data/bad/negative_opset.onnx
