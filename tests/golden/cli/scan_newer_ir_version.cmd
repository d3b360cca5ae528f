scan @SRC@/tests/data/versions/ir14_opset23.onnx
