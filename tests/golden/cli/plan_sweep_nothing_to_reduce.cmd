plan @SRC@/tests/data/plan/peak_raising_level1.onnx --sweep
