grad @SRC@/tests/data/grad_fixtures/gpt2_tiny/model.onnx -o @WORK@/train.onnx
