grad @DATA@/forward/gpt2_megatron.onnx -o @WORK@/train.onnx --frozen embeddings
