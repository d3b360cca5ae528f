apply @SRC@/tests/data/plan/gpt2_tiny_2layer.onnx --config @SRC@/tests/data/configs/gpt2_tiny_budget_0.6.json --dims batch=8,seq_len=32 -o @WORK@/out.onnx --verify
