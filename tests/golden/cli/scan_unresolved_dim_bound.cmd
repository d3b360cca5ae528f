scan @SRC@/tests/data/dims/range_unresolved.onnx --dims batch=2,unk__0=4
