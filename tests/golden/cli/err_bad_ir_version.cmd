scan @SRC@/tests/data/bad/bad_ir_version.onnx
