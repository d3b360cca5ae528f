scan @SRC@/tests/data/bad/bad_raw_size.onnx
