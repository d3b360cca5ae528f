plan @SRC@/tests/data/plan/gpt2_tiny_2layer.onnx --sweep
