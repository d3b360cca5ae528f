grad @DATA@/forward/bert_toy_optimized.onnx -o @WORK@/train.onnx
