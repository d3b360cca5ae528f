scan @SRC@/tests/data/bad/truncated.onnx
