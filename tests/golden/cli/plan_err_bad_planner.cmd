plan @SRC@/tests/data/plan/gpt2_tiny_2layer.onnx --budget 0.6 --dims batch=8,seq_len=32 --planner exact
