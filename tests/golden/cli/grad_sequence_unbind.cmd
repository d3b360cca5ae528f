grad @SRC@/tests/data/grad_cases/unbind_dynamo.onnx -o @WORK@/train.onnx
