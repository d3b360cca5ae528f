plan @SRC@/tests/data/plan/gpt2_tiny_2layer.onnx --dims batch=4,seq_len=64 --budget 1230000B --budget-of footprint
