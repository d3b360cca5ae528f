apply @SRC@/tests/data/plan/gpt2_tiny_2layer.onnx --config LayerNormalization+:1:-1,LayerNormalization+@0/5:0:0 --dims batch=2,seq_len=8 -o @WORK@/split_rw.onnx
