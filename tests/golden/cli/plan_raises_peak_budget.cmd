plan @SRC@/tests/data/plan/peak_raising_level1.onnx --budget 1.0
