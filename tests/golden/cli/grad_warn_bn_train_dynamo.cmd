grad @SRC@/tests/data/grad_cases/bn_train_dynamo.onnx -o @WORK@/train.onnx
