run @SRC@/tests/data/run/unsupported_op.onnx
