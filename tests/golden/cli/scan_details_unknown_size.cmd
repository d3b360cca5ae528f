scan @SRC@/tests/data/run/unknown_size.onnx --details
