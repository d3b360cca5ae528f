grad @SRC@/tests/data/grad_cases/tied_layernorm.onnx -o @WORK@/train.onnx
