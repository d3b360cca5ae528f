grad @SRC@/tests/data/grad_cases/gru_lm_dynamo.onnx -o @WORK@/train.onnx
