plan @SRC@/tests/data/plan/gpt2_tiny_2layer.onnx --level 1 --dims batch=8,seq_len=32 --objective flops -o @WORK@/mem_opt.json
