grad @SRC@/tests/data/bad/truncated.onnx -o @WORK@/train.onnx
