apply @SRC@/tests/data/plan/peak_raising_level1.onnx --config @SRC@/tests/data/configs/slice.json -o @WORK@/remat.onnx --verify
