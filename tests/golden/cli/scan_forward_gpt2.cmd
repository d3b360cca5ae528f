scan @DATA@/forward/gpt2_megatron.onnx
