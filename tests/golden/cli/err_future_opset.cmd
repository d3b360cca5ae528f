scan @SRC@/tests/data/bad/future_opset.onnx
