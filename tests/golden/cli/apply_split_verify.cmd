apply @SRC@/tests/data/plan/gpt2_tiny_2layer.onnx --config @SRC@/tests/data/configs/split_gpt2_tiny.json --dims batch=2,seq_len=8 -o @WORK@/split_rw.onnx --verify
