scan @SRC@/tests/data/bad/cyclic.onnx
