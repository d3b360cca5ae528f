plan @SRC@/tests/data/plan/gpt2_tiny_2layer.onnx --budget 0.7 --splits maybe --dims batch=2,seq_len=8
