scan @SRC@/tests/data/bad/dims_pinned.onnx --dims batch=8
